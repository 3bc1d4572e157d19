import { inspectorAssetsDir } from '@baton/inspector';
import fastifyStatic from '@fastify/static';
import type { FastifyInstance } from 'fastify';

/** The pages a browser asks for without a token: the inspector's, and what a browser asks first. */
export const INSPECTOR_PAGES = ['/', '/favicon.ico', '/inspector', '/inspector/*'] as const;

/**
 * The inspector at `/inspector/`; the server's root leads to it (someone who opens the address the
 * `baton` command printed finds a page), and `/favicon.ico`, which every browser asks for, is its icon.
 */
export async function mountInspector(app: FastifyInstance): Promise<void> {
  const inspector = `${app.prefix}/inspector/`;
  app.get('/', (_request, reply) => reply.redirect(inspector));
  app.get('/favicon.ico', (_request, reply) => reply.redirect(`${inspector}favicon.svg`));
  app.get('/inspector', (_request, reply) => reply.redirect(inspector));
  await app.register(fastifyStatic, { root: inspectorAssetsDir, prefix: '/inspector/' });
}
