import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { sqliteStore } from '@baton/store-sqlite';
import { afterAll, describe, expect, it } from 'vitest';

const root = join(import.meta.dirname, '..', '..');
const CLI = join(root, 'apps', 'server', 'dist', 'cli.js');
const dir = mkdtempSync(join(tmpdir(), 'baton-deploy-signals-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/**
 * The address of the server a process started, once its banner says it. Its output is read to
 * the end: a pipe left unread would block the server's (synchronous) log lines.
 */
function listening(child: ChildProcess): Promise<string> {
  return new Promise((resolve, reject) => {
    const lines: string[] = [];
    const reading = createInterface({ input: child.stdout as NodeJS.ReadableStream });
    reading.on('line', (line) => {
      lines.push(line);
      const address = /Baton is listening on (\S+)/.exec(line)?.[1];
      if (address) resolve(address);
    });
    reading.on('close', () =>
      reject(new Error(`the server stopped before it listened:\n${lines.join('\n')}`)),
    );
  });
}

/** A call of the demo `slow_report` (2 s of real work): past the inline budget, in the background. */
async function slowCall(address: string): Promise<string> {
  const response = await fetch(`${address}/v1/calls`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'slow_report', args: { seconds: 2 }, sessionId: 'deploy' }),
  });
  const reply = (await response.json()) as { callId: string; status: string };
  expect(reply.status).toBe('backgrounded');
  return reply.callId;
}

const exitOf = (child: ChildProcess) =>
  new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));

/** How the call ended, as the store kept it once the process was gone. */
async function endOf(path: string, callId: string) {
  const store = sqliteStore({ path });
  try {
    const record = await store.getCall(callId);
    return { status: record?.status, error: record?.error?.code };
  } finally {
    await store.close();
  }
}

describe('a deploy that stops the server the documented ways lets the call in flight finish', () => {
  it('as a container runs it, node itself PID 1 (the Dockerfile’s entry point, compose’s): SIGTERM drains', async () => {
    const path = join(dir, 'pid1.db');
    // unshare forks Node as PID 1 of a new PID namespace; the SIGTERM goes to Node, as a
    // container runtime sends it to the entry point.
    const child = spawn(
      'unshare',
      ['--pid', '--fork', '--kill-child', process.execPath, CLI, 'serve', '--port', '0', '--store', path],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    const exited = exitOf(child);
    const address = await listening(child);
    const callId = await slowCall(address);
    const node = Number(execFileSync('pgrep', ['-P', String(child.pid)], { encoding: 'utf8' }).trim());
    process.kill(node, 'SIGTERM');
    expect(await exited).toBe(0);
    await expect(fetch(`${address}/healthz`)).rejects.toThrow();
    expect(await endOf(path, callId)).toEqual({ status: 'succeeded', error: undefined });
  }, 120_000);

  it('as `npm start` runs it: npm passes the SIGTERM on to the server, which drains', async () => {
    const path = join(dir, 'npm-start.db');
    const child = spawn('npm', ['start', '--silent'], {
      cwd: root,
      env: { ...process.env, BATON_PORT: '0', BATON_STORE: path },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const exited = exitOf(child);
    const address = await listening(child);
    const callId = await slowCall(address);
    child.kill('SIGTERM');
    await exited;
    // The server is gone with npm, not left behind it serving.
    await expect(fetch(`${address}/healthz`)).rejects.toThrow();
    expect(await endOf(path, callId)).toEqual({ status: 'succeeded', error: undefined });
  }, 180_000);
});
