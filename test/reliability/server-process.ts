import { type ChildProcessByStdio, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import type { Readable } from 'node:stream';

/** The built reference server (turbo builds it before these tests: the package depends on it). */
export const MAIN = join(import.meta.dirname, '..', '..', 'apps', 'server', 'dist', 'main.js');

export interface RunningServer {
  address: string;
  child: ChildProcessByStdio<null, Readable, null>;
  /** SIGTERM, the exit code, and the data directory removed. */
  stop(): Promise<number | null>;
}

/**
 * Starts the built server on a free port, with its SQLite file in a new temporary directory.
 * `shell`, when given, is a shell command to run first in a mount namespace of the server's own
 * (`$DIR` is the data directory): a small tmpfs there, say, that vanishes with the process.
 */
export async function startServer(
  env: Record<string, string> = {},
  shell?: string,
  /** Flags for the server's Node (`--max-old-space-size=…`). */
  nodeFlags: string[] = [],
): Promise<RunningServer & { dir: string }> {
  const dir = mkdtempSync(join(tmpdir(), 'baton-reliability-'));
  const [command, args] = shell
    ? [
        'unshare',
        [
          '--mount',
          '--propagation',
          'private',
          'sh',
          '-c',
          `${shell} && exec "$0" "$1"`,
          process.execPath,
          ...nodeFlags,
          MAIN,
        ],
      ]
    : [process.execPath, [...nodeFlags, MAIN]];
  const child = spawn(command, args, {
    env: { ...process.env, BATON_PORT: '0', BATON_STORE: join(dir, 'baton.db'), DIR: dir, ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
    cwd: dir,
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  let address = '';
  for await (const line of createInterface({ input: child.stdout })) {
    address ||= /listening on (\S+)/.exec(line)?.[1] ?? '';
    if (address && line.includes('access:')) break;
  }
  if (!address) throw new Error(`the server exited with ${await exited} before it listened`);
  child.stdout.resume();
  return {
    address,
    child,
    dir,
    async stop() {
      child.kill('SIGTERM');
      const code = await exited;
      rmSync(dir, { recursive: true, force: true });
      return code;
    },
  };
}
