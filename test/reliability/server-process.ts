import { type ChildProcessByStdio, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import type { Readable } from 'node:stream';

/** The built reference server (turbo builds it before these tests: the package depends on it). */
const MAIN = join(import.meta.dirname, '..', '..', 'apps', 'server', 'dist', 'main.js');

export interface RunningServer {
  address: string;
  child: ChildProcessByStdio<null, Readable, null>;
  /** SIGTERM, the exit code, and the data directory removed. */
  stop(): Promise<number | null>;
}

/** Starts the built server on a free port, with its SQLite file in a new temporary directory. */
export async function startServer(env: Record<string, string> = {}): Promise<RunningServer> {
  const dir = mkdtempSync(join(tmpdir(), 'baton-reliability-'));
  const child = spawn(process.execPath, [MAIN], {
    env: { ...process.env, BATON_PORT: '0', BATON_STORE: join(dir, 'baton.db'), ...env },
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
    async stop() {
      child.kill('SIGTERM');
      const code = await exited;
      rmSync(dir, { recursive: true, force: true });
      return code;
    },
  };
}
