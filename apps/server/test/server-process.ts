import { type ChildProcessByStdio, spawn } from 'node:child_process';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import type { Readable } from 'node:stream';

export const MAIN = join(import.meta.dirname, '..', 'dist', 'main.js');

export interface ServerProcess {
  address: string;
  /** What it printed when it started. */
  banner: string;
  child: ChildProcessByStdio<null, Readable, null>;
  /** SIGTERM, and the exit code. */
  stop(): Promise<number | null>;
}

/** Starts the built server with `env` on a free port and resolves once it says where it listens. */
export async function startServer(
  env: Record<string, string>,
  cwd?: string,
  args: string[] = [],
): Promise<ServerProcess> {
  const child = spawn(process.execPath, [MAIN, ...args], {
    env: { ...process.env, BATON_PORT: '0', ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
    ...(cwd ? { cwd } : {}),
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
    stop() {
      child.kill('SIGTERM');
      return exited;
    },
  };
}
