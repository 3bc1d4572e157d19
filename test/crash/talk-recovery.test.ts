/**
 * What replaces what survives the process: a call with an update and a "still running" reminder
 * queued, its process SIGKILLed, is taken up by the next one; once it ends, its session has its
 * end to be given, and neither the old update nor the old reminder after it.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { createRuntime } from '@baton/runtime';
import { type ThrowawayPostgres, throwawayPostgres } from '@baton/store-postgres/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
// Plain ES modules, shared with the child process.
import { reportingTool } from './reporting-tools.mjs';
import { openStore } from './stores.mjs';

const dir = mkdtempSync(join(tmpdir(), 'baton-talk-'));
let postgres: ThrowawayPostgres;
beforeAll(async () => {
  postgres = await throwawayPostgres();
}, 60_000);
afterAll(async () => {
  await postgres.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe.each([
  ['SQLite', () => join(dir, 'talk.db')],
  ['PostgreSQL', () => `${postgres.url}#crash_talk_${process.pid}`],
])('an update and a reminder across a SIGKILL, on %s', (_store, location) => {
  it('leaves only the end queued once the call taken up ends', { timeout: 60_000 }, async () => {
    const path = location();
    const child = spawn(process.execPath, [join(import.meta.dirname, 'dying-reporter.mjs'), path], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const exited = new Promise((resolve) => child.on('exit', (_code, signal) => resolve(signal)));
    for await (const line of createInterface({ input: child.stdout })) {
      if (line === 'update and reminder queued') break;
    }
    child.kill('SIGKILL');
    expect(await exited).toBe('SIGKILL');

    const runtime = createRuntime({ tools: [reportingTool()], store: openStore(path) });
    try {
      await runtime.ready;
      // Not `runtime.wait`: a waiter is given the end, and acknowledges what it replaces.
      const ended = async () =>
        (await runtime.notifications.list({ sessionId: 's' })).some(
          (notification) => notification.outcome !== 'running',
        );
      const deadline = Date.now() + 30_000;
      while (!(await ended()) && Date.now() < deadline)
        await new Promise((resolve) => setTimeout(resolve, 20));
      expect(await runtime.get('build_1')).toMatchObject({ status: 'succeeded', output: 'built' });
      const queued = await runtime.notifications.list({ sessionId: 's', status: 'queued' });
      expect(queued.map(({ callId, outcome }) => ({ callId, outcome }))).toEqual([
        { callId: 'build_1', outcome: 'succeeded' },
      ]);
    } finally {
      await runtime.close();
    }
  });
});
