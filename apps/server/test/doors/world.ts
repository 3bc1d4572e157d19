import { defineTool } from '@baton/contracts';
import { createRuntime, type Runtime } from '@baton/runtime';
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { createServer } from '../../src/server.js';
import { userSegmentOf } from '../../src/tenancy.js';
import { freePort, type IssuerClient, signingKey, startIssuer } from '../oauth-issuer.js';
import type { CallerName, DoorWorld } from './door-suite.js';

const TENANT_WIDE = 'baton:tenant';
const EVERY_SCOPE = 'tools vault:read deploy:write';

/** The OAuth callers, each a client of the issuer whose tokens name its organisation. */
const CLIENTS: Record<'alice' | 'bob' | 'carol' | 'tenant', IssuerClient> = {
  alice: { id: 'alice', secret: 'a-secret-of-alice-00000001', scope: EVERY_SCOPE, claims: { org: 'acme' } },
  bob: { id: 'bob', secret: 'a-secret-of-bob-0000000001', scope: 'tools', claims: { org: 'acme' } },
  carol: { id: 'carol', secret: 'a-secret-of-carol-00000001', scope: EVERY_SCOPE, claims: { org: 'bolt' } },
  tenant: {
    id: 'acme-ops',
    secret: 'a-secret-of-acme-ops-000001',
    scope: `tools ${TENANT_WIDE}`,
    claims: { org: 'acme' },
  },
};
const STATIC = { static: 'a-static-token-of-acme-00001', spent: 'a-static-token-of-spent-0001' } as const;

/** The tools of the world: see `DoorTool`. The background ones run until they are cancelled. */
function tools() {
  const untilCancelled = (signal: AbortSignal) =>
    new Promise<string>((_resolve, reject) => signal.addEventListener('abort', () => reject(signal.reason)));
  return [
    defineTool({
      name: 'echo',
      description: 'Echoes',
      input: z.object({ text: z.string() }),
      execute: ({ text }) => text,
    }),
    defineTool({
      name: 'vault_export',
      description: 'Exports the vault, taking instructions while it runs',
      scope: 'vault:read',
      input: z.object({ what: z.string() }),
      messages: z.string(),
      execution: { mode: 'auto' },
      execute: (_args, ctx) => untilCancelled(ctx.signal),
    }),
    defineTool({
      name: 'deploy',
      description: 'Deploys, once approved',
      scope: 'deploy:write',
      input: z.object({ service: z.string() }),
      execution: { mode: 'auto', needsApproval: true },
      execute: (_args, ctx) => untilCancelled(ctx.signal),
    }),
  ];
}

export const ARGS = {
  echo: { text: 'hi' },
  vault_export: { what: 'keys' },
  deploy: { service: 'web' },
} as const;

export interface World extends DoorWorld {
  base: string;
  runtime: Runtime;
  /** The bearer token each caller sends. */
  tokenOf(caller: CallerName): string;
  /** A token of the same caller without the tools' scopes (a session opened by a narrower token). */
  narrowTokenOf(caller: CallerName): string;
  close(): Promise<void>;
}

/**
 * One server with every door, an OAuth issuer (oidc-provider) on loopback issuing each OAuth
 * caller's tokens by the client credentials grant, static tokens, and `spent`'s quota used up.
 */
export async function startWorld(): Promise<World> {
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const resource = `${base}/`;
  const issuer = await startIssuer(resource, [(await signingKey('key-1')).jwk], {
    clients: Object.values(CLIENTS),
  });
  const runtime = createRuntime({
    tools: tools(),
    builtins: ['spawn_background'],
    inlineBudgetMs: 50,
    tenantOf: (sessionId) => sessionId.split('/')[0] ?? '',
    maxIdChars: 256,
  });
  await runtime.ready;
  const app: FastifyInstance = createServer({
    runtime,
    tokens: { [STATIC.static]: 'acme', [STATIC.spent]: 'spent' },
    oauth: {
      issuer: issuer.issuer,
      resource,
      tenantClaim: 'org',
      tenantScope: TENANT_WIDE,
      scopes: [...EVERY_SCOPE.split(' '), TENANT_WIDE],
      keysCooldownMs: 0,
    },
    // `spent` may make one call a minute on a clock that stands still: once made, none more.
    quotas: { tenants: { spent: { callsPerMinute: 1 } }, now: () => 0 },
  });
  await app.listen({ host: '127.0.0.1', port });
  const tokens = new Map<CallerName, string>(Object.entries(STATIC) as Array<[CallerName, string]>);
  const narrow = new Map<CallerName, string>(Object.entries(STATIC) as Array<[CallerName, string]>);
  for (const [caller, client] of Object.entries(CLIENTS) as Array<[CallerName, IssuerClient]>) {
    tokens.set(caller, await issuer.token(resource, client));
    // The same caller (a tenant-wide one stays tenant-wide), without the tools' own scopes.
    const kept = client.scope.split(' ').filter((scope) => scope === 'tools' || scope === TENANT_WIDE);
    narrow.set(caller, await issuer.token(resource, { ...client, scope: kept.join(' ') }));
  }
  const spend = await fetch(`${base}/v1/calls`, {
    method: 'POST',
    headers: { authorization: `Bearer ${STATIC.spent}`, 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'echo', args: ARGS.echo, sessionId: 'spending' }),
  });
  if (spend.status !== 200) throw new Error(`spent's one call was answered ${spend.status}`);
  const tenantWide = new Set<CallerName>(['tenant', 'static']);
  return {
    base,
    runtime,
    tokenOf: (caller) => tokens.get(caller) ?? '',
    narrowTokenOf: (caller) => narrow.get(caller) ?? '',
    // A tenant-wide view names a user's calls under the user's segment (`~…/id`).
    idAs: (caller, aliceId) => (tenantWide.has(caller) ? `${userSegmentOf('alice')}${aliceId}` : aliceId),
    async close() {
      await app.close();
      await runtime.close();
      await issuer.close();
    },
  };
}
