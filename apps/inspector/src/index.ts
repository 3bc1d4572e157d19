import { fileURLToPath } from 'node:url';

/** The inspector page's files (`index.html`, `inspector.js`, `inspector.css`), for a server to serve. */
export const inspectorAssetsDir: string = fileURLToPath(new URL('./assets/', import.meta.url));
