import { type ChildProcessByStdio, spawn } from 'node:child_process';
import { join } from 'node:path';
import { createInterface, type Interface } from 'node:readline';
import type { Readable, Writable } from 'node:stream';

/** A process of a PostgreSQL measure (a script of `workers/` or `peers/`), driven by lines on its stdin. */
export interface RoleProcess {
  /** Resolves with the next line the process prints that starts with `word`. */
  next(word: string): Promise<string[]>;
  send(line: string): void;
  stop(): Promise<void>;
  /** SIGKILLs it: a crash, nothing closed. */
  kill(): Promise<void>;
  /** Whether it still runs (it may have exited of itself). */
  readonly alive: boolean;
  /** Resolves once it has exited. */
  readonly exited: Promise<unknown>;
}

export interface RoleOptions {
  /** The script, from the bench's folder: Baton's role, or a peer's (installed apart, see `peersInstalled`). */
  script: 'workers/pg-role.mjs' | 'peers/pg-peer.mjs';
  env: Record<string, string>;
  /** The Node that runs it; this one by default. */
  node?: string;
}

/** Starts a role's script and resolves once it prints `ready`. */
export async function startRole({ script, env, node = process.execPath }: RoleOptions): Promise<RoleProcess> {
  const child: ChildProcessByStdio<Writable, Readable, null> = spawn(
    node,
    // BENCH_NODE_ARGS: flags for the role processes, such as `--cpu-prof --cpu-prof-dir=/tmp/prof`.
    [
      ...(process.env.BENCH_NODE_ARGS?.split(' ').filter(Boolean) ?? []),
      join(import.meta.dirname, '..', script),
    ],
    { env: { ...process.env, ...env }, stdio: ['pipe', 'pipe', 'inherit'] },
  );
  let alive = true;
  const exited = new Promise((resolve) => child.once('exit', resolve)).finally(() => {
    alive = false;
  });
  const lines: Interface = createInterface({ input: child.stdout });
  const waiting: Array<{ word: string; resolve: (words: string[]) => void }> = [];
  lines.on('line', (line) => {
    const [word = '', ...rest] = line.split(' ');
    const at = waiting.findIndex((waiter) => waiter.word === word);
    if (at !== -1) waiting.splice(at, 1)[0]?.resolve(rest);
  });
  const next = (word: string) => new Promise<string[]>((resolve) => waiting.push({ word, resolve }));
  await Promise.race([
    next('ready'),
    exited.then(() =>
      Promise.reject(new Error(`${script} (${JSON.stringify(env)}) exited before it was ready`)),
    ),
  ]);
  return {
    next,
    send: (line) => child.stdin.write(`${line}\n`),
    stop: async () => {
      child.kill('SIGTERM');
      await exited;
    },
    kill: async () => {
      child.kill('SIGKILL');
      await exited;
    },
    get alive() {
      return alive;
    },
    exited,
  };
}

/** What each process used since its last report: CPU µs and queries, summed over the processes. */
export async function reports(
  processes: readonly RoleProcess[],
): Promise<{ cpuUs: number; queries: number }> {
  const each = await Promise.all(
    processes.map(async (role) => {
      const reported = role.next('report');
      role.send('report');
      const [cpuUs = '0', queries = '0'] = await reported;
      return { cpuUs: Number(cpuUs), queries: Number(queries) };
    }),
  );
  return {
    cpuUs: each.reduce((sum, one) => sum + one.cpuUs, 0),
    queries: each.reduce((sum, one) => sum + one.queries, 0),
  };
}

/** Calls numbered from here are warm-up calls, apart from the measured ones. */
const WARMUP_OFFSET = 1_000_000_000;

/** Runs `calls` calls, `inFlight` at a time, in one process; resolves with calls per second. */
export async function runCalls(
  role: RoleProcess,
  calls: number,
  inFlight: number,
  offset = 0,
): Promise<number> {
  const done = role.next('done');
  const started = performance.now();
  role.send(`run ${calls} ${inFlight} ${offset}`);
  await done;
  return calls / ((performance.now() - started) / 1_000);
}

/**
 * The warm-up before a measured round: each client process makes `calls` calls (numbered apart
 * from the measured ones), so the round measures compiled code, not the JIT's first minutes.
 */
export async function warmUp(
  clients: readonly RoleProcess[],
  calls: number,
  inFlight: number,
): Promise<void> {
  await Promise.all(clients.map((client, c) => runCalls(client, calls, inFlight, WARMUP_OFFSET + c * calls)));
}
