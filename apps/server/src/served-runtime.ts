import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { BatonError, MAX_ID_CHARS } from '@baton/contracts';
import { createRuntime, type Runtime } from '@baton/runtime';
import type { Store } from '@baton/store';
import { postgresStore } from '@baton/store-postgres';
import { sqliteStore } from '@baton/store-sqlite';
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { ConfigError, type ServerConfig } from './config.js';
import { redactedLocation } from './redacted-location.js';
import { tenantOfId, USER_SEGMENT_CHARS } from './tenancy.js';
import type { ServedModule } from './tools-module.js';
import { webhooksOf } from './webhooks.js';

const DEFAULT_RETENTION_DAYS = 7;
const DAY_MS = 86_400_000;

/** The role of a process: `both` runs its calls and others', `client` only submits, `worker` only runs. */
export type ProcessRole = 'client' | 'worker' | 'both';

export function isPostgres(location: string): boolean {
  return /^postgres(ql)?:\/\//.test(location);
}

/** `postgres://…` is a PostgreSQL server (the server then takes clients' calls too); anything else, a SQLite file. */
export function openStore(location: string, init: boolean): Store {
  if (isPostgres(location)) return postgresStore({ connectionString: location, init });
  try {
    mkdirSync(dirname(location), { recursive: true });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const why =
      code === 'ENOTDIR' || code === 'EEXIST'
        ? 'a file is in the way of its directory'
        : code === 'EACCES' || code === 'EPERM'
          ? 'this user may not make its directory'
          : `its directory cannot be made (${code ?? String(error)})`;
    throw new ConfigError(
      `bad configuration: store ${location}: ${why}: choose another with --store (BATON_STORE)`,
    );
  }
  return sqliteStore({ path: location, init });
}

/**
 * Connections the kernel holds for the server while it is busy. Node's 511 is too few for a burst
 * of clients: beyond it the kernel answers with SYN cookies, and resets a connection whose first
 * bytes it dropped. The kernel lowers it to its own limit (`net.core.somaxconn`).
 */
const LISTEN_BACKLOG = 4096;

/**
 * The server cannot listen where it was told (a port in use, one that needs privileges, a host
 * not this machine's): no change of the tools fixes it, so `--watch` stops on it.
 */
export class ListenError extends ConfigError {}

/** The exit code of a server that could not listen (sysexits' EX_CONFIG). */
export const EXIT_CANNOT_LISTEN = 78;

/**
 * Listens, or says in one line why not: a port in use, one that needs privileges, or a host that
 * is not this machine's.
 */
export async function listenOn(
  app: Pick<FastifyInstance, 'listen'>,
  host: string,
  port: number,
): Promise<string> {
  try {
    return await app.listen({ host, port, backlog: LISTEN_BACKLOG });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EADDRINUSE') {
      throw new ListenError(
        `port ${port} on ${host} is in use (another server?): choose another with --port (BATON_PORT), or 0 for any free port`,
      );
    }
    if (code === 'EACCES') {
      throw new ListenError(
        `port ${port} needs privileges this user lacks: choose one above 1023 with --port (BATON_PORT)`,
      );
    }
    if (code === 'EADDRNOTAVAIL' || code === 'ENOTFOUND') {
      throw new ListenError(
        `host ${host} is not an address of this machine: choose another with --host (BATON_HOST)`,
      );
    }
    throw error;
  }
}

/**
 * A client or a worker shares its calls with other processes through PostgreSQL: on SQLite one
 * process runs every call, so any other role is refused in one line before anything starts.
 */
export function checkRole(role: ProcessRole, config: ServerConfig, command: string): void {
  if (role === 'both' || isPostgres(config.storePath)) return;
  throw new ConfigError(
    `bad configuration: ${command} needs a PostgreSQL store (BATON_STORE=postgres://…), which its processes share; the store ${redactedLocation(config.storePath)} is SQLite, where one process runs every call (role both)`,
  );
}

/** How long the server's runtime keeps an ended call, when it is the server's to say (MCP tasks report it). */
export function retentionOf(served: ServedModule, config: ServerConfig): { retentionMs?: number } {
  const retentionDays = config.retentionDays ?? DEFAULT_RETENTION_DAYS;
  return 'runtime' in served || retentionDays === 0 ? {} : { retentionMs: retentionDays * DAY_MS };
}

/**
 * The runtime a process runs the module's tools on: the configured store, role, limits, tenants and
 * retention. A module that exports its own runtime runs as it was made, in the role it was given.
 */
export function runtimeFor(
  served: ServedModule,
  config: ServerConfig,
  { init, log, role, store }: { init: boolean; log: Logger; role: ProcessRole; store?: Store },
): Runtime {
  if ('runtime' in served) {
    if (role !== 'both') {
      throw new ConfigError(
        `bad configuration: the module exports a runtime, which runs in the role it was made with; export its tools instead for role ${role}`,
      );
    }
    return served.runtime;
  }
  const { retentionMs } = retentionOf(served, config);
  const webhooks = webhooksOf(config);
  const tenants = Object.values(config.tokens);
  // An OAuth tenant's name may be any of 64 characters, and a user's ids have a segment of their own.
  const longestPrefix = config.oauth
    ? 65 + USER_SEGMENT_CHARS
    : Math.max(0, ...tenants.map((tenant) => tenant.length + 1));
  return createRuntime({
    // One tenant that floods the server with slow calls leaves slots to the others.
    ...(tenants.length > 0 || config.oauth ? { tenantOf: tenantOfId } : {}),
    tools: served.tools,
    store: store ?? openStore(config.storePath, init),
    role,
    inlineBudgetMs: config.inlineBudgetMs,
    ...(config.storeRetryMs !== undefined ? { storeRetryMs: config.storeRetryMs } : {}),
    ...(config.claimWaitMs !== undefined ? { claimWaitMs: config.claimWaitMs } : {}),
    limits: config.limits,
    ...(config.builtins ? { builtins: config.builtins } : {}),
    ...(webhooks ? { webhooks } : {}),
    // A server keeps a week of ended calls by default: the store does not grow without end.
    ...(retentionMs !== undefined ? { retention: { endedTtlMs: retentionMs } } : {}),
    // Callers' ids are kept under their tenant's prefix (`tenant/`): room for the longest one.
    maxIdChars: MAX_ID_CHARS + longestPrefix,
    logger: log.child({ component: 'runtime' }),
  });
}

/**
 * Waits for the runtime's store: one that cannot be reached at start (a database that is gone, a
 * server that refuses) is one line, naming the store without its secrets.
 */
export async function storeReady(runtime: Runtime, config: ServerConfig): Promise<void> {
  await runtime.ready.catch((error: unknown) => {
    throw new BatonError(
      'persistence_failed',
      `the store ${redactedLocation(config.storePath)} cannot be used: ${(error as Error)?.message ?? String(error)}`,
      { cause: error },
    );
  });
}
