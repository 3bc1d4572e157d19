/**
 * The `baton` command: `baton serve [./tools.js]` runs a server over your tools (or the demo
 * tools), `baton worker [./tools.js]` runs the calls servers in the role `client` submit,
 * `baton doctor` checks a SQLite store. Options come from flags, the environment
 * (`BATON_*`) and `baton.config.json`, in that order, with the same validation.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { isBatonError } from '@baton/contracts';
import { SqliteStore, storeFileProblem } from '@baton/store-sqlite';
import { ConfigError, loadConfig } from './config.js';
import { environmentWith, type FlagValues, inFlagTerms, parseFlags } from './flags.js';
import { LOG_LEVELS, type LogLevel } from './logger.js';
import { serve } from './serve.js';
import { checkRole, EXIT_CANNOT_LISTEN, isPostgres, ListenError } from './served-runtime.js';
import { VERSION } from './version.js';
import { serveWatching } from './watch.js';
import { work } from './worker.js';

export const USAGE = `Usage:
  baton serve [module] [options]   serve the tools a module exports (the demo tools without one)
  baton worker [module] [options]  run the calls that servers in the role client submit (PostgreSQL)
  baton doctor [--store path]      check a SQLite store file whole, and exit 0 when it is sound
  baton --help                     this text
  baton --version                  the version of @baton/server

A module exports tools made with defineTool() (each as an export, or a \`tools\` list), or a
\`runtime\` made with createRuntime(): an ES module or CommonJS, JavaScript or TypeScript (.ts).

Options of serve (each also an environment variable, or a key of baton.config.json):
  --port <n>          BATON_PORT          default 8787 (0: any free port)
  --host <name>       BATON_HOST          default 127.0.0.1
  --store <location>  BATON_STORE         a SQLite file (default ./.baton/baton.db) or postgres://...
  --init              BATON_STORE_INIT=1  start afresh where a store used to be
  --log-level <level> BATON_LOG_LEVEL     ${LOG_LEVELS.join(', ')} (default info)
  --drain-ms <n>      BATON_DRAIN_MS      on SIGTERM, how long live calls may run on (default 30000)
  --webhook-url <url> BATON_WEBHOOK_URL   POST each background call's end there (Standard Webhooks)
  --webhook-secret <whsec_…>  BATON_WEBHOOK_SECRET   the secret its deliveries are signed with
  --webhook-allow-private true   BATON_WEBHOOK_ALLOW_PRIVATE   let webhooks (tenants' too) go to
                                 private, link-local and reserved addresses (default false)
  --webhook-allow-loopback true  BATON_WEBHOOK_ALLOW_LOOPBACK  let them go to loopback (default:
                                 when the server listens on loopback)
  --role <role>       BATON_ROLE          both (default: runs its calls), or client: its calls run
                                          on the workers (baton worker), on a PostgreSQL store
  --concurrency <n>   BATON_CONCURRENCY   calls run at once (default 64)
  --quota-calls-per-minute <n>  BATON_QUOTA_CALLS_PER_MINUTE  each tenant's calls a minute (default none)
  --request-timeout-ms <n>  BATON_REQUEST_TIMEOUT_MS  a request's time to arrive, body too (default 30000)
  --max-body-depth <n>      BATON_MAX_BODY_DEPTH      how deep a JSON body may nest (default 80)
  --max-body-keys <n>       BATON_MAX_BODY_KEYS       its keys and nested values (default 10000)
  --watch                                 restart whenever the module or a local file it imports changes,
                                          atomic saves included (development); a port in use stops it

Exit codes: 0 stopped, 1 a bad configuration or a module that does not load, 78 cannot listen
(a port in use, one that needs privileges, a host not this machine's).

Options of worker: --store (a postgres:// URL), --concurrency, --drain-ms, --init, --log-level,
--host, and --port <n> (BATON_WORKER_PORT) to answer /healthz and /metrics there (default: none).
Also: BATON_TOKENS (tenant:token,...), BATON_OPERATOR_TOKENS (token,... for /metrics), BATON_INLINE_BUDGET_MS, BATON_ALLOWED_HOSTS,
BATON_ALLOWED_ORIGINS, BATON_RETENTION_DAYS,
BATON_WEBHOOK_RETRY_SCHEDULE_MS (ms,ms,...), BATON_CONFIG (the config file).
`;

/**
 * `serve --watch`: the same command in a child process, started again whenever the module or a
 * local file it imports changes (see watch.ts), with no drain (what runs is handed over to the
 * next start). Resolves with the exit code once it stops.
 */
function watching(module: string, argv: readonly string[]): Promise<number> {
  const cli = fileURLToPath(new URL('./cli.js', import.meta.url));
  return serveWatching({
    module,
    start: () =>
      spawn(process.execPath, [cli, ...argv.filter((arg) => arg !== '--watch')], {
        stdio: 'inherit',
        env: { BATON_DRAIN_MS: '0', ...process.env },
      }),
    log: (line) => process.stderr.write(`${line}\n`),
  });
}

/** Runs `load`, telling a configuration problem by the flag that gave the value. */
function withFlagTerms<T>(load: () => T, values: FlagValues): T {
  try {
    return load();
  } catch (error) {
    throw error instanceof ConfigError ? inFlagTerms(error, values) : error;
  }
}

/** The port a worker answers probes on, when one is given. */
function workerPort(given: string | undefined): number | undefined {
  if (given === undefined) return undefined;
  const port = Number(given);
  if (!Number.isInteger(port) || port < 0 || port > 65_535) {
    throw new ConfigError(`bad configuration: worker port ${given}: a whole number from 0 to 65535`);
  }
  return port;
}

/** `doctor`: SQLite's full integrity_check over the store file; exit 0 when sound, 1 otherwise. */
async function doctor(location: string): Promise<number> {
  if (isPostgres(location)) {
    process.stdout.write(
      'doctor checks SQLite stores; for PostgreSQL use its own tools (amcheck, pg_dump)\n',
    );
    return 2;
  }
  if (!existsSync(location)) {
    process.stdout.write(
      `${location}: no store there, so nothing to check (and nothing was made; baton serve makes one at its first start)\n`,
    );
    return 1;
  }
  const problem = storeFileProblem(location);
  if (problem) {
    process.stdout.write(`${location}: ${problem}; nothing was checked or changed\n`);
    return 1;
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

/** Runs the `baton` command; resolves with the exit code of a command that ends (serve does not). */
export async function runBaton(argv: readonly string[]): Promise<number | undefined> {
  try {
    const { values, positionals } = parseFlags(argv);
    const [command, module, ...extra] = positionals;
    if (values.version) {
      process.stdout.write(`${VERSION}\n`);
      return 0;
    }
    if (values.help || command === 'help' || command === undefined) {
      process.stdout.write(USAGE);
      return command === undefined && !values.help ? 2 : 0;
    }
    if (extra.length > 0) throw new ConfigError(`unexpected argument ${extra[0]}\n\n${USAGE}`);
    // Flags win over the environment, which wins over the file: the same validation for all three.
    // A worker's port is its own (its probes' and scrapes'), and it has none unless given.
    const env = environmentWith(values, process.env, command === 'worker' ? ['port'] : []);
    const config = withFlagTerms(() => loadConfig(env), values);
    if (command === 'doctor') {
      if (module !== undefined) throw new ConfigError(`doctor takes no module\n\n${USAGE}`);
      return await doctor(config.storePath);
    }
    if (command !== 'serve' && command !== 'worker') {
      throw new ConfigError(`unknown command ${command}\n\n${USAGE}`);
    }
    const level = values['log-level'] ?? process.env.BATON_LOG_LEVEL ?? 'info';
    if (!(LOG_LEVELS as readonly string[]).includes(level)) {
      throw new ConfigError(`bad configuration: log level ${level}: one of ${LOG_LEVELS.join(', ')}`);
    }
    const init = values.init === true || process.env.BATON_STORE_INIT === '1';
    if (command === 'worker') {
      if (values.role !== undefined)
        throw new ConfigError('bad configuration: --role is for serve; a worker is a worker');
      const port = workerPort(values.port ?? process.env.BATON_WORKER_PORT);
      await work(module, config, { init, level: level as LogLevel, port });
    } else if (values.watch) {
      if (module === undefined)
        throw new ConfigError('--watch reloads a module of tools: name one (baton serve ./tools.js --watch)');
      return await watching(module, argv);
    } else {
      checkRole(config.role, config, `baton serve --role ${config.role}`);
      await serve(module, config, init, level as LogLevel);
    }
    return undefined;
  } catch (error) {
    // A bad configuration, and a store that cannot be used, are one line that says what to do.
    const known =
      error instanceof ConfigError ||
      isBatonError(error) ||
      (error as NodeJS.ErrnoException)?.code?.startsWith('ERR_PARSE_ARGS');
    if (!known) throw error;
    process.stderr.write(`${isBatonError(error) ? 'baton: ' : ''}${(error as Error).message}\n`);
    return error instanceof ListenError ? EXIT_CANNOT_LISTEN : 1;
  }
}
