import { parseArgs } from 'node:util';
import { ConfigError } from './config.js';

/**
 * The `baton` command's flags: each string flag that configures the server stands for an
 * environment variable (`--port` for `BATON_PORT`), so that flags, the environment and the file
 * share one validation; a problem is told by the flag's name when the flag gave the value.
 */
const FLAGS = {
  port: { type: 'string', env: 'BATON_PORT' },
  host: { type: 'string', env: 'BATON_HOST' },
  store: { type: 'string', env: 'BATON_STORE' },
  'drain-ms': { type: 'string', env: 'BATON_DRAIN_MS' },
  'webhook-url': { type: 'string', env: 'BATON_WEBHOOK_URL' },
  'webhook-secret': { type: 'string', env: 'BATON_WEBHOOK_SECRET' },
  'webhook-allow-private': { type: 'string', env: 'BATON_WEBHOOK_ALLOW_PRIVATE' },
  'webhook-allow-loopback': { type: 'string', env: 'BATON_WEBHOOK_ALLOW_LOOPBACK' },
  role: { type: 'string', env: 'BATON_ROLE' },
  concurrency: { type: 'string', env: 'BATON_CONCURRENCY' },
  'quota-calls-per-minute': { type: 'string', env: 'BATON_QUOTA_CALLS_PER_MINUTE' },
  'request-timeout-ms': { type: 'string', env: 'BATON_REQUEST_TIMEOUT_MS' },
  'max-body-depth': { type: 'string', env: 'BATON_MAX_BODY_DEPTH' },
  'max-body-keys': { type: 'string', env: 'BATON_MAX_BODY_KEYS' },
  'log-level': { type: 'string', env: undefined },
  init: { type: 'boolean', env: undefined },
  watch: { type: 'boolean', env: undefined },
  help: { type: 'boolean', env: undefined, short: 'h' },
  version: { type: 'boolean', env: undefined, short: 'v' },
} as const;

type Flag = keyof typeof FLAGS;
export type FlagValues = { [F in Flag]?: (typeof FLAGS)[F]['type'] extends 'boolean' ? boolean : string };

/** Edits between two words (Levenshtein), for "did you mean". */
function distance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      const substitution = (previous[j - 1] as number) + (a[i - 1] === b[j - 1] ? 0 : 1);
      current.push(Math.min((previous[j] as number) + 1, (current[j - 1] as number) + 1, substitution));
    }
    previous = current;
  }
  return previous[b.length] as number;
}

/** The flag a mistyped one most likely meant: within two edits, or one it begins. */
export function nearestFlag(given: string): string | undefined {
  const name = given.replace(/^-+/, '').split('=')[0] ?? '';
  let best: { flag: string; edits: number } | undefined;
  for (const flag of Object.keys(FLAGS)) {
    const edits = flag.startsWith(name) && name.length >= 2 ? 0 : distance(name, flag);
    if (edits <= 2 && (!best || edits < best.edits)) best = { flag, edits };
  }
  return best && `--${best.flag}`;
}

/** Parses the command line, or throws a ConfigError of one line that says what to do. */
export function parseFlags(argv: readonly string[]): { values: FlagValues; positionals: string[] } {
  try {
    const { values, positionals } = parseArgs({
      args: [...argv],
      allowPositionals: true,
      strict: true,
      options: FLAGS,
    });
    return { values: values as FlagValues, positionals };
  } catch (error) {
    const { code, message } = error as NodeJS.ErrnoException;
    if (code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION') {
      const given = /'([^']+)'/.exec(message)?.[1] ?? '';
      const meant = nearestFlag(given);
      throw new ConfigError(
        `unknown option ${given}${meant ? `: did you mean ${meant}?` : ''} (baton --help lists the options)`,
      );
    }
    if (code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE') {
      const flag = /'(--[a-z-]+)/.exec(message)?.[1] ?? 'an option';
      throw new ConfigError(`${flag} needs a value: ${flag} <value> (baton --help lists the options)`);
    }
    throw error;
  }
}

/** The environment the flags stand for, over this one: flags win. */
export function environmentWith(
  values: FlagValues,
  env: NodeJS.ProcessEnv,
  skip: readonly Flag[] = [],
): NodeJS.ProcessEnv {
  const given: NodeJS.ProcessEnv = { ...env };
  for (const [flag, { env: name }] of Object.entries(FLAGS) as Array<[Flag, (typeof FLAGS)[Flag]]>) {
    const value = values[flag];
    if (name && typeof value === 'string' && !skip.includes(flag)) given[name] = value;
  }
  return given;
}

/**
 * A configuration problem as the user wrote it: `BATON_PORT` becomes `--port "abc"` when the flag
 * gave the value, and zod's "expected number, received NaN" says what it wanted.
 */
export function inFlagTerms(error: ConfigError, values: FlagValues): ConfigError {
  let message = error.message.replace('expected number, received NaN', 'expected a number');
  for (const [flag, { env: name }] of Object.entries(FLAGS) as Array<[Flag, (typeof FLAGS)[Flag]]>) {
    const value = values[flag];
    if (name && typeof value === 'string' && message.includes(`${name}:`)) {
      message = message.replace(`${name}:`, `--${flag} ${JSON.stringify(value)}:`);
    }
  }
  return message === error.message ? error : new ConfigError(message);
}
