/**
 * At most once for what is not idempotent: a tool that is not idempotent runs only once its start
 * is stored, so a process killed at any moment of its run leaves a record that says it began, and
 * the next start ends it `interrupted` instead of running it again. The window is made wide: the
 * tool blocks the event loop right after its side effect, so nothing is written after it.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { createRuntime } from '@baton/runtime';
import { sqliteStore } from '@baton/store-sqlite';
import { afterAll, describe, expect, it } from 'vitest';
// A plain ES module, shared with the child process.
import { chargingTools } from './charging-tools.mjs';

const dir = mkdtempSync(join(tmpdir(), 'baton-at-most-once-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const lines = (file: string) => (existsSync(file) ? readFileSync(file, 'utf8').trim().split('\n') : []);

describe('a tool that is not idempotent, its process killed while it runs', () => {
  it('has run once, and ends interrupted after the restart', async () => {
    const path = join(dir, 'charge.db');
    const sideEffects = join(dir, 'charged.log');
    const child = spawn(
      process.execPath,
      [join(import.meta.dirname, 'charging-runtime.mjs'), path, sideEffects],
      {
        stdio: ['ignore', 'pipe', 'inherit'],
      },
    );
    const exited = new Promise<NodeJS.Signals | null>((resolve) =>
      child.on('exit', (_code, signal) => resolve(signal)),
    );
    for await (const line of createInterface({ input: child.stdout })) if (line === 'submitted') break;
    // Killed once the charge has happened: its process is stuck right after it, writing nothing.
    while (lines(sideEffects).length === 0) await new Promise((resolve) => setTimeout(resolve, 20));
    child.kill('SIGKILL');
    expect(await exited).toBe('SIGKILL');

    const runtime = createRuntime({ tools: chargingTools(sideEffects, 0), store: sqliteStore({ path }) });
    try {
      await runtime.ready;
      expect(await runtime.get('charge')).toMatchObject({ status: 'failed', error: { code: 'interrupted' } });
      expect(await runtime.get('hold')).toMatchObject({ status: 'succeeded' });
      expect(lines(sideEffects)).toEqual([`charged by ${child.pid}`]);
    } finally {
      await runtime.close();
    }
  });
});
