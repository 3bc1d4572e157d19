/**
 * The `baton` command: `baton serve [./tools.js]` runs a server over your tools (or the demo
 * tools), `baton doctor` checks a SQLite store. Options come from flags, the environment
 * (`BATON_*`) and `baton.config.json`, in that order, with the same validation.
 */
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { parseArgs } from 'node:util';
import { BatonError, isBatonError, MAX_ID_CHARS, toMcpTool } from '@baton/contracts';
import { createRuntime, type Runtime } from '@baton/runtime';
import type { Store } from '@baton/store';
import { postgresStore } from '@baton/store-postgres';
import { SqliteStore, sqliteStore } from '@baton/store-sqlite';
import type { Logger } from 'pino';
import { ConfigError, loadConfig, redactedLocation, type ServerConfig } from './config.js';
import { demoTools } from './demo-tools.js';
import { createLogger, LOG_LEVELS, type LogLevel } from './logger.js';
import { createServer } from './server.js';
import { tenantOfId } from './tenancy.js';
import { loadServedModule, type ServedModule } from './tools-module.js';
import { LOOPBACK_HOSTS } from './web-safety.js';
import { webhooksOf } from './webhooks.js';

export const USAGE = `Usage:
  baton serve [module] [options]   serve the tools a module exports (the demo tools without one)
  baton doctor [--store path]      check a SQLite store file whole, and exit 0 when it is sound
  baton --help                     this text

A module exports tools made with defineTool() (each as an export, or a \`tools\` list), or a
\`runtime\` made with createRuntime().

Options of serve (each also an environment variable, or a key of baton.config.json):
  --port <n>          BATON_PORT          default 8787 (0: any free port)
  --host <name>       BATON_HOST          default 127.0.0.1
  --store <location>  BATON_STORE         a SQLite file (default ./.baton/baton.db) or postgres://...
  --init              BATON_STORE_INIT=1  start afresh where a store used to be
  --log-level <level> BATON_LOG_LEVEL     ${LOG_LEVELS.join(', ')} (default info)
  --drain-ms <n>      BATON_DRAIN_MS      on SIGTERM, how long live calls may run on (default 30000)
  --webhook-url <url> BATON_WEBHOOK_URL   POST each background call's end there (Standard Webhooks)
  --webhook-secret <whsec_…>  BATON_WEBHOOK_SECRET   the secret its deliveries are signed with
Also: BATON_TOKENS (tenant:token,...), BATON_OPERATOR_TOKENS (token,... for /metrics), BATON_INLINE_BUDGET_MS, BATON_ALLOWED_HOSTS,
BATON_ALLOWED_ORIGINS, BATON_RETENTION_DAYS, BATON_WEBHOOK_ALLOW_PRIVATE,
BATON_WEBHOOK_RETRY_SCHEDULE_MS (ms,ms,...), BATON_CONFIG (the config file).
`;

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
async function doctor(location: string): Promise<number> {
  if (isPostgres(location)) {
    process.stdout.write(
      'doctor checks SQLite stores; for PostgreSQL use its own tools (amcheck, pg_dump)\n',
    );
    return 2;
  }
  const store = new SqliteStore({ path: location, check: 'none' });
  const problems = await store.integrityCheck();
  await store.close();
  if (problems.length === 0) {
    process.stdout.write(`${location}: ok (integrity_check found no problem)\n`);
    return 0;
  }
  process.stdout.write(
    `${location}: ${problems.length} problem(s):\n${problems.map((line) => `  ${line}\n`).join('')}`,
  );
  return 1;
}

/** Arguments that fit a tool's schema, for the sample `curl` of the banner: each required property, plainly. */
function sampleArgs(schema: {
  properties?: Record<string, { type?: unknown; default?: unknown }>;
  required?: string[];
}) {
  const samples: Record<string, unknown> = {
    string: 'hello',
    number: 1,
    integer: 1,
    boolean: true,
    array: [],
    object: {},
  };
  return Object.fromEntries(
    (schema.required ?? []).map((name) => {
      const property = schema.properties?.[name];
      return [name, property?.default ?? samples[String(property?.type)] ?? null];
    }),
  );
}

/** How long the server's runtime keeps an ended call, when it is the server's to say (MCP tasks report it). */
function retentionOf(served: ServedModule, config: ServerConfig): { retentionMs?: number } {
  const retentionDays = config.retentionDays ?? DEFAULT_RETENTION_DAYS;
  return 'runtime' in served || retentionDays === 0 ? {} : { retentionMs: retentionDays * DAY_MS };
}

/** The runtime a server over these tools runs on: the configured store, limits, tenants and retention. */
function runtimeFor(served: ServedModule, config: ServerConfig, init: boolean, log: Logger): Runtime {
  if ('runtime' in served) return served.runtime;
  const { retentionMs } = retentionOf(served, config);
  const webhooks = webhooksOf(config);
  const tenants = Object.values(config.tokens);
  return createRuntime({
    // One tenant that floods the server with slow calls leaves slots to the others.
    ...(tenants.length > 0 ? { tenantOf: tenantOfId } : {}),
    tools: served.tools,
    store: openStore(config.storePath, init),
    inlineBudgetMs: config.inlineBudgetMs,
    limits: config.limits,
    ...(config.builtins ? { builtins: config.builtins } : {}),
    ...(webhooks ? { webhooks } : {}),
    // A server keeps a week of ended calls by default: the store does not grow without end.
    ...(retentionMs !== undefined ? { retention: { endedTtlMs: retentionMs } } : {}),
    // Callers' ids are kept under their tenant's prefix (`tenant/`): room for the longest one.
    maxIdChars: MAX_ID_CHARS + Math.max(0, ...tenants.map((tenant) => tenant.length + 1)),
    logger: log.child({ component: 'runtime' }),
  });
}

async function serve(module: string | undefined, config: ServerConfig, init: boolean, level: LogLevel) {
  const log = createLogger(level);
  const served: ServedModule = module === undefined ? { tools: demoTools } : await loadServedModule(module);
  const runtime = runtimeFor(served, config, init, log);
  // A store that cannot be reached at start (a database that is gone, a server that refuses) is
  // one line too, naming the store without its secrets.
  await runtime.ready.catch((error: unknown) => {
    throw new BatonError(
      'persistence_failed',
      `the store ${redactedLocation(config.storePath)} cannot be used: ${(error as Error)?.message ?? String(error)}`,
      { cause: error },
    );
  });
  const authenticated = Object.keys(config.tokens).length > 0;
  const app = createServer({
    runtime,
    logger: log,
    tokens: config.tokens,
    operatorTokens: config.operatorTokens,
    webSafety: {
      // Without tokens, the loopback names and the one the server was told to listen on.
      allowedHosts:
        config.allowedHosts ??
        (authenticated ? undefined : [...LOOPBACK_HOSTS, config.host.replace(/^\[|\]$/g, '')]),
      ...(config.allowedOrigins ? { allowedOrigins: config.allowedOrigins } : {}),
    },
    mcp: { ...config.mcp, ...retentionOf(served, config) },
    limits: {
      ...(config.streams?.perTenant ? { streamsPerTenant: config.streams.perTenant } : {}),
      ...(config.streams?.total ? { streams: config.streams.total } : {}),
    },
  });
  const address = await app.listen({ host: config.host, port: config.port });
  // Before the banner: whoever reads it may stop the server at once (stdout to a pipe is synchronous).
  const stop = async (signal: NodeJS.Signals) => {
    log.info(
      { signal, drainMs: config.drainMs },
      'stopping: no new calls (503); live calls may end for the drain, then are handed over',
    );
    await runtime.close({ drainMs: config.drainMs });
    await app.close();
    log.info('stopped');
    log.flush();
    process.exit(0);
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  const tools = runtime.tools.names();
  log.info({ address, tools, store: redactedLocation(config.storePath) }, 'started');
  const tenants = new Set(Object.values(config.tokens));
  const access =
    tenants.size === 0
      ? 'no tokens configured: no authentication, so listening on loopback only'
      : `bearer tokens for ${tenants.size} tenant(s)${config.operatorTokens.length > 0 ? ', /metrics for operator tokens' : ', /metrics for none (no operator token)'}`;
  const first = runtime.tools.definitions()[0];
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
      `  tools:      ${tools.join(', ')}`,
      ...(first
        ? [
            `  try:        curl -s ${address}/v1/calls -H 'content-type: application/json' \\`,
            `                -d '${JSON.stringify({ name: first.name, args: sampleArgs(toMcpTool(first).inputSchema), sessionId: 's1' })}'`,
          ]
        : []),
      '',
    ].join('\n'),
  );
}

/** Runs the `baton` command; resolves with the exit code of a command that ends (serve does not). */
export async function runBaton(argv: readonly string[]): Promise<number | undefined> {
  try {
    const { values, positionals } = parseArgs({
      args: [...argv],
      allowPositionals: true,
      strict: true,
      options: {
        help: { type: 'boolean', short: 'h' },
        port: { type: 'string' },
        host: { type: 'string' },
        store: { type: 'string' },
        init: { type: 'boolean' },
        'log-level': { type: 'string' },
        'drain-ms': { type: 'string' },
        'webhook-url': { type: 'string' },
        'webhook-secret': { type: 'string' },
      },
    });
    const [command, module, ...extra] = positionals;
    if (values.help || command === 'help' || command === undefined) {
      process.stdout.write(USAGE);
      return command === undefined && !values.help ? 2 : 0;
    }
    if (extra.length > 0) throw new ConfigError(`unexpected argument ${extra[0]}\n\n${USAGE}`);
    // Flags win over the environment, which wins over the file: the same validation for all three.
    const env = {
      ...process.env,
      ...(values.port !== undefined ? { BATON_PORT: values.port } : {}),
      ...(values.host !== undefined ? { BATON_HOST: values.host } : {}),
      ...(values.store !== undefined ? { BATON_STORE: values.store } : {}),
      ...(values['drain-ms'] !== undefined ? { BATON_DRAIN_MS: values['drain-ms'] } : {}),
      ...(values['webhook-url'] !== undefined ? { BATON_WEBHOOK_URL: values['webhook-url'] } : {}),
      ...(values['webhook-secret'] !== undefined ? { BATON_WEBHOOK_SECRET: values['webhook-secret'] } : {}),
    };
    const config = loadConfig(env);
    if (command === 'doctor') {
      if (module !== undefined) throw new ConfigError(`doctor takes no module\n\n${USAGE}`);
      return await doctor(config.storePath);
    }
    if (command !== 'serve') throw new ConfigError(`unknown command ${command}\n\n${USAGE}`);
    const level = values['log-level'] ?? process.env.BATON_LOG_LEVEL ?? 'info';
    if (!(LOG_LEVELS as readonly string[]).includes(level)) {
      throw new ConfigError(`bad configuration: log level ${level}: one of ${LOG_LEVELS.join(', ')}`);
    }
    const init = values.init === true || process.env.BATON_STORE_INIT === '1';
    await serve(module, config, init, level as LogLevel);
    return undefined;
  } catch (error) {
    // A bad configuration, and a store that cannot be used, are one line that says what to do.
    const known =
      error instanceof ConfigError ||
      isBatonError(error) ||
      (error as NodeJS.ErrnoException)?.code?.startsWith('ERR_PARSE_ARGS');
    if (!known) throw error;
    process.stderr.write(`${isBatonError(error) ? 'baton: ' : ''}${(error as Error).message}\n`);
    return 1;
  }
}
