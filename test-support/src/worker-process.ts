import { type ChildProcessByStdio, spawn } from 'node:child_process';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import type { Readable } from 'node:stream';

/** The built `baton` command. */
export const CLI = join(import.meta.dirname, '..', '..', 'apps', 'server', 'dist', 'cli.js');

export interface WorkerProcess {
  /** Where it answers /healthz and /metrics, when started with a port. */
  address: string | undefined;
  instanceId: string;
  banner: string;
  child: ChildProcessByStdio<null, Readable, null>;
  /** SIGTERM (a drain), and the exit code. */
  stop(): Promise<number | null>;
}

/**
 * Starts `baton worker [module]` on a PostgreSQL store, and resolves once its banner is printed
 * (its LISTEN is up by then). With `port`, it answers probes on a free port.
 */
export async function startWorker({
  store,
  module,
  args = [],
  env = {},
  port = false,
  cwd,
  cli = CLI,
}: {
  store: string;
  module?: string;
  args?: string[];
  env?: Record<string, string>;
  port?: boolean;
  cwd?: string;
  /** The built command to run, when not this tree's (another version's, in the upgrade test). */
  cli?: string;
}): Promise<WorkerProcess> {
  const argv = [cli, 'worker', ...(module ? [module] : []), ...(port ? ['--port', '0'] : []), ...args];
  const child = spawn(process.execPath, argv, {
    // A test's worker stops promptly: what still runs after half a second is handed over.
    env: { ...process.env, BATON_DRAIN_MS: '500', BATON_STORE: store, ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
    ...(cwd ? { cwd } : {}),
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  const banner: string[] = [];
  let instanceId = '';
  let address: string | undefined;
  for await (const line of createInterface({ input: child.stdout })) {
    banner.push(line);
    instanceId ||= /^Baton worker (\S+)/.exec(line)?.[1] ?? '';
    address ??= /metrics:\s+(\S+)\/metrics/.exec(line)?.[1];
    if (instanceId && (port ? address !== undefined : line.includes('tools:'))) break;
  }
  if (!instanceId) throw new Error(`the worker exited with ${await exited} before it started`);
  child.stdout.resume();
  return {
    address,
    instanceId,
    banner: banner.join('\n'),
    child,
    async stop() {
      child.kill('SIGTERM');
      return exited;
    },
  };
}
