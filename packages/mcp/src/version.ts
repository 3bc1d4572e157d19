import { readFileSync } from 'node:fs';

/** The version of the installed package, as its package.json says (one level above src/ and dist/). */
export const VERSION = (
  JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }
).version;
