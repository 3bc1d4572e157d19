/**
 * `npm start`: the reference server, on the embedded SQLite store unless told of a PostgreSQL.
 * `--init` starts afresh where a store used to be; `doctor` checks the whole SQLite file and exits.
 */
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { BatonError, isBatonError, MAX_ID_CHARS } from '@baton/contracts';
import { createRuntime } from '@baton/runtime';
import type { Store } from '@baton/store';
import { postgresStore } from '@baton/store-postgres';
import { SqliteStore, sqliteStore } from '@baton/store-sqlite';
import { buildApp } from './app.js';
import { ConfigError, loadConfig, redactedLocation } from './config.js';
import { demoTools } from './demo-tools.js';
import { tenantOfId } from './tenancy.js';
import { LOOPBACK_HOSTS } from './web-safety.js';

const USAGE = 'usage: main.js [--init] | main.js doctor';
const DEFAULT_RETENTION_DAYS = 7;
const DAY_MS = 86_400_000;

/** `postgres://…` is a PostgreSQL server (the server then takes clients' calls too); anything else, a SQLite file. */
function openStore(location: string, init: boolean): Store {
  if (isPostgres(location)) return postgresStore({ connectionString: location });
  mkdirSync(dirname(location), { recursive: true });
  return sqliteStore({ path: location, init });
}

function isPostgres(location: string): boolean {
  return /^postgres(ql)?:\/\//.test(location);
}

/** `doctor`: SQLite's full integrity_check over the store file; exit 0 when sound, 1 otherwise. */
async function doctor(location: string): Promise<never> {
  if (isPostgres(location)) {
    process.stdout.write(
      'doctor checks SQLite stores; for PostgreSQL use its own tools (amcheck, pg_dump)\n',
    );
    process.exit(2);
  }
  const store = new SqliteStore({ path: location, check: 'none' });
  const problems = await store.integrityCheck();
  await store.close();
  if (problems.length === 0) {
    process.stdout.write(`${location}: ok (integrity_check found no problem)\n`);
    process.exit(0);
  }
  process.stdout.write(
    `${location}: ${problems.length} problem(s):\n${problems.map((line) => `  ${line}\n`).join('')}`,
  );
  process.exit(1);
}

try {
  const args = process.argv.slice(2);
  const init = args.includes('--init') || process.env.BATON_STORE_INIT === '1';
  const unknown = args.filter((arg) => arg !== '--init' && arg !== 'doctor');
  if (unknown.length > 0) throw new ConfigError(`unknown argument ${unknown[0]}: ${USAGE}`);
  const config = loadConfig(process.env);
  if (args.includes('doctor')) await doctor(config.storePath);
  const authenticated = Object.keys(config.tokens).length > 0;
  const retentionDays = config.retentionDays ?? DEFAULT_RETENTION_DAYS;
  const runtime = createRuntime({
    // One tenant that floods the server with slow calls leaves slots to the others.
    ...(authenticated ? { tenantOf: tenantOfId } : {}),
    tools: demoTools,
    store: openStore(config.storePath, init),
    inlineBudgetMs: config.inlineBudgetMs,
    limits: config.limits,
    // A server keeps a week of ended calls by default: the store does not grow without end.
    ...(retentionDays > 0 ? { retention: { endedTtlMs: retentionDays * DAY_MS } } : {}),
    // Callers' ids are kept under their tenant's prefix (`tenant/`): room for the longest one.
    maxIdChars:
      MAX_ID_CHARS + Math.max(0, ...Object.values(config.tokens).map((tenant) => tenant.length + 1)),
  });
  // A store that cannot be reached at start (a database that is gone, a server that refuses) is
  // one line too, naming the store without its secrets.
  await runtime.ready.catch((error: unknown) => {
    throw new BatonError(
      'persistence_failed',
      `the store ${redactedLocation(config.storePath)} cannot be used: ${(error as Error)?.message ?? String(error)}`,
      { cause: error },
    );
  });
  const app = buildApp({
    runtime,
    tokens: config.tokens,
    webSafety: {
      // Without tokens, the loopback names and the one the server was told to listen on.
      allowedHosts:
        config.allowedHosts ??
        (authenticated ? undefined : [...LOOPBACK_HOSTS, config.host.replace(/^\[|\]$/g, '')]),
      ...(config.allowedOrigins ? { allowedOrigins: config.allowedOrigins } : {}),
    },
    mcp: config.mcp ?? {},
    limits: {
      ...(config.streams?.perTenant ? { streamsPerTenant: config.streams.perTenant } : {}),
      ...(config.streams?.total ? { streams: config.streams.total } : {}),
    },
  });
  const address = await app.listen({ host: config.host, port: config.port });
  // Before the banner: whoever reads it may stop the server at once (stdout to a pipe is synchronous).
  const stop = async () => {
    await app.close();
    await runtime.close();
    process.exit(0);
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  const tenants = new Set(Object.values(config.tokens));
  const access =
    tenants.size === 0
      ? 'no tokens configured: no authentication, so listening on loopback only'
      : `bearer tokens for ${tenants.size} tenant(s)`;
  process.stdout.write(
    [
      `Baton is listening on ${address}`,
      `  API:        ${address}/v1/calls  (OpenAPI: ${address}/openapi.json)`,
      `  MCP:        ${address}/mcp`,
      `  inspector:  ${address}/inspector/`,
      `  metrics:    ${address}/metrics`,
      `  health:     ${address}/healthz`,
      `  store:      ${redactedLocation(config.storePath)}`,
      `  access:     ${access}`,
      '',
    ].join('\n'),
  );
} catch (error) {
  // A bad configuration, and a store that cannot be used, are one line that says what to do.
  if (!(error instanceof ConfigError) && !isBatonError(error)) throw error;
  process.stderr.write(`${isBatonError(error) ? 'baton: ' : ''}${error.message}\n`);
  process.exit(1);
}
