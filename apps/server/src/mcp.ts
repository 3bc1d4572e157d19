import type { JsonTextLimits } from '@baton/contracts';
import type { McpHandler, NodeMcpHandler } from '@baton/mcp';
import type { Runtime } from '@baton/runtime';
import type { FastifyInstance } from 'fastify';
import { MCP_SCHEMA } from './openapi.js';
import type { TenantQuotas } from './quotas.js';
import type { Tenancy } from './tenancy.js';
import type { ToolScopes } from './tool-scopes.js';

/** MCP sessions of the server (2025-11-25); the defaults are `@baton/mcp`'s. */
export interface McpSessionOptions {
  /** A session unused this long is closed and forgotten. Default 30 minutes. */
  sessionTtlMs?: number;
  /**
   * Open sessions per tenant (default 100) and in all (default 1,000). At a cap the least recently
   * used idle session is closed to make room; `initialize` gets 429 only when all are busy.
   */
  sessionsPerTenant?: number;
  sessions?: number;
  /** The clock sessions age by. Default `Date.now`. */
  now?: () => number;
  /**
   * Serve `check_background`, `wait_background`, `cancel_background` and `list_background` to
   * clients that take no tasks, when a tool may go to the background. Default true.
   */
  backgroundControl?: boolean;
  /** The shape a body may have, read before it is parsed (see `BatonPluginOptions.bodyShape`). */
  bodyShape?: JsonTextLimits;
  /** How long the runtime keeps an ended call, so that MCP tasks report their real `ttl`. */
  retentionMs?: number;
}

/**
 * The MCP endpoint at `/mcp`, served by `@baton/mcp`: both protocol generations, tasks for calls
 * that pass their inline budget. It reads its own body (a malformed one gets JSON-RPC's -32700)
 * and checks its own token (a 401 that says `WWW-Authenticate`); the server's web-safety hook has
 * checked the Host and the Origin already.
 *
 * The MCP SDK is loaded on the first MCP request: a server whose clients speak only REST does not
 * carry it.
 */
export async function mountMcp(
  app: FastifyInstance,
  runtime: Runtime,
  tenancy: Tenancy,
  toolScopes: Pick<ToolScopes, 'challenge'>,
  quotas: Pick<TenantQuotas, 'refusal'>,
  options: McpSessionOptions,
): Promise<void> {
  const onError = (error: Error) => app.log.warn({ err: error }, 'MCP');
  let mcp: McpHandler | undefined;
  let serving: Promise<NodeMcpHandler> | undefined;
  const serve = () =>
    (serving ??= import('@baton/mcp').then(({ createMcpHandler, toNodeHandler }) => {
      mcp = createMcpHandler({
        runtime,
        authenticate: async (request) => {
          const authentication = await tenancy.authenticate(
            request.headers.get('authorization') ?? undefined,
          );
          if (!('scope' in authentication)) return undefined;
          const { scope } = authentication;
          return {
            // A tenant's user has sessions and task cursors of its own.
            tenant: scope.owner,
            inside: (id: string) => scope.inside(id),
            outside: (id: string) => scope.outside(id),
            newCallId: () => scope.newCallId(),
            caller: scope.caller,
            challenge: (needed: string) => toolScopes.challenge(needed),
            quotaRefusal: () => quotas.refusal(scope.tenant),
          };
        },
        challengeOf: (request) => tenancy.challengeOf(request.headers.get('authorization') ?? undefined),
        allowedHosts: 'any',
        allowedOrigins: 'any',
        sessions: {
          ...(options.sessionTtlMs !== undefined ? { ttlMs: options.sessionTtlMs } : {}),
          ...(options.sessionsPerTenant !== undefined ? { perTenant: options.sessionsPerTenant } : {}),
          ...(options.sessions !== undefined ? { total: options.sessions } : {}),
        },
        ...(options.now ? { now: options.now } : {}),
        ...(options.backgroundControl !== undefined ? { backgroundControl: options.backgroundControl } : {}),
        ...(options.retentionMs !== undefined ? { retentionMs: options.retentionMs } : {}),
        ...(options.bodyShape !== undefined ? { bodyShape: options.bodyShape } : {}),
        onError,
        onIdleSessionClosed: ({ sessionId, tenant, idleMs }) =>
          app.log.info(
            { sessionId, tenant, idleMs },
            'MCP: an idle session was closed to make room for a new one',
          ),
      });
      return toNodeHandler(mcp, { onError });
    }));
  await app.register(async (endpoint) => {
    // The body stays unread for the handler: it answers a malformed one itself, in JSON-RPC.
    endpoint.removeAllContentTypeParsers();
    endpoint.addContentTypeParser('*', (_request, _payload, done) => done(null));
    endpoint.route({
      method: ['GET', 'POST', 'DELETE'],
      url: '/mcp',
      schema: MCP_SCHEMA,
      handler: async (request, reply) => {
        const handle = await serve();
        reply.hijack();
        await handle(request.raw, reply.raw);
      },
    });
  });
  app.addHook('onClose', async () => {
    await mcp?.close();
  });
}
