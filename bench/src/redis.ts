import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

function onPath(command: string): boolean {
  try {
    execFileSync('sh', ['-c', `command -v ${command}`], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/** Installs Debian's redis-server when it is missing and this is root; false when it cannot be had. */
export function ensureRedisServer(): boolean {
  if (onPath('redis-server')) return true;
  if (process.getuid?.() !== 0 || !onPath('apt-get')) return false;
  process.stderr.write('bench: installing redis-server from Debian packages...\n');
  try {
    execFileSync('apt-get', ['update', '-qq'], { stdio: 'ignore' });
    execFileSync('apt-get', ['install', '-y', '-qq', 'redis-server'], { stdio: 'ignore' });
  } catch {
    return false;
  }
  return onPath('redis-server');
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() =>
        typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port')),
      );
    });
  });
}

export interface RedisServer {
  port: number;
  stop(): Promise<void>;
}

/** How a Redis keeps what it is given: not at all, or in its append-only file, flushed each second. */
export type RedisPersistence = 'off' | 'aof-everysec';

/** A throw-away Redis on loopback in its own directory, stopped by `stop()`. */
export async function startRedis(persistence: RedisPersistence = 'off'): Promise<RedisServer> {
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'baton-redis-'));
  const args = [
    '--port',
    String(port),
    '--bind',
    '127.0.0.1',
    '--save',
    '',
    ...(persistence === 'off'
      ? ['--appendonly', 'no']
      : ['--appendonly', 'yes', '--appendfsync', 'everysec']),
    '--dir',
    dir,
  ];
  const child: ChildProcess = spawn('redis-server', args, { stdio: ['ignore', 'pipe', 'inherit'] });
  await new Promise<void>((resolve, reject) => {
    let output = '';
    child.stdout?.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes('Ready to accept connections')) resolve();
    });
    child.once('exit', (code) => reject(new Error(`redis-server exited with ${code}: ${output}`)));
  });
  return {
    port,
    stop: async () => {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
