import { type ChildProcessByStdio, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import type { Readable } from 'node:stream';

/** The built reference server (turbo builds it first: the workspaces that test it depend on it). */
export const MAIN = join(import.meta.dirname, '..', '..', 'apps', 'server', 'dist', 'main.js');

export interface ServerProcess {
  address: string;
  /** What it printed when it started. */
  banner: string;
  child: ChildProcessByStdio<null, Readable, null>;
  /** The working directory it runs in. */
  dir: string;
  /** SIGTERM, and the exit code; a directory made for it is removed. */
  stop(): Promise<number | null>;
}

export interface ServerStart {
  /** Its environment, beside this process's, on a free port (`BATON_PORT=0`) with a drain of 500 ms. */
  env?: Record<string, string>;
  /**
   * Its working directory. Default: a new temporary one, with the SQLite store in it, removed when
   * the server stops.
   */
  dir?: string;
  /** Arguments after the server's own path (`--init`). */
  args?: string[];
  /** Flags for the server's Node (`--max-old-space-size=…`). */
  nodeFlags?: string[];
  /**
   * A shell command to run first in a mount namespace of the server's own (`$DIR` is its working
   * directory): a small tmpfs there, say, that vanishes with the process. Needs root.
   */
  shell?: string;
  /** The built server to run, when not this tree's (another version's, in the upgrade test). */
  main?: string;
}

/** Starts the built server as a process, and resolves once it says where it listens. */
export async function startServer({
  env = {},
  dir: given,
  args = [],
  nodeFlags = [],
  shell,
  main = MAIN,
}: ServerStart = {}): Promise<ServerProcess> {
  if (shell && process.getuid?.() !== 0) {
    throw new Error(
      'this test runs the server in a mount namespace of its own (a small tmpfs): it needs root',
    );
  }
  const dir = given ?? mkdtempSync(join(tmpdir(), 'baton-server-'));
  const node = [...nodeFlags, main, ...args];
  const [command, argv] = shell
    ? [
        'unshare',
        [
          '--mount',
          '--propagation',
          'private',
          'sh',
          '-c',
          `${shell} && exec "$0" "$@"`,
          process.execPath,
          ...node,
        ],
      ]
    : [process.execPath, node];
  const child = spawn(command, argv, {
    env: {
      ...process.env,
      BATON_PORT: '0',
      // A test's server stops promptly: what still runs after half a second is handed over.
      BATON_DRAIN_MS: '500',
      ...(given ? {} : { BATON_STORE: join(dir, 'baton.db') }),
      DIR: dir,
      ...env,
    },
    stdio: ['ignore', 'pipe', 'inherit'],
    cwd: dir,
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  let address = '';
  const banner: string[] = [];
  for await (const line of createInterface({ input: child.stdout })) {
    banner.push(line);
    address ||= /listening on (\S+)/.exec(line)?.[1] ?? '';
    if (address && line.includes('access:')) break;
  }
  if (!address) throw new Error(`the server exited with ${await exited} before it listened`);
  child.stdout.resume();
  return {
    address,
    banner: banner.join('\n'),
    child,
    dir,
    async stop() {
      child.kill('SIGTERM');
      const code = await exited;
      if (!given) rmSync(dir, { recursive: true, force: true });
      return code;
    },
  };
}
