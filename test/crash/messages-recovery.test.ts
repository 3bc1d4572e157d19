import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { createRuntime } from '@baton/runtime';
import { type ThrowawayPostgres, throwawayPostgres } from '@baton/store-postgres/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
// Plain ES modules, shared with the child process.
import { steeredTool } from './steered-tools.mjs';
import { openStore } from './stores.mjs';

const dir = mkdtempSync(join(tmpdir(), 'baton-messages-'));
let postgres: ThrowawayPostgres;
beforeAll(async () => {
  postgres = await throwawayPostgres();
}, 60_000);
afterAll(async () => {
  await postgres.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe.each([
  ['SQLite', () => join(dir, 'messages.db')],
  ['PostgreSQL', () => `${postgres.url}#crash_messages_${process.pid}`],
])('steering across a SIGKILL, on %s', (store, location) => {
  it('gives the recovered call the message it had not read, once, and not the one it had', {
    timeout: 60_000,
  }, async () => {
    const path = location();
    const readLog = join(dir, `read-${store}.log`);
    const child = spawn(process.execPath, [join(import.meta.dirname, 'dying-steered.mjs'), path, readLog], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const exited = new Promise((resolve) => child.on('exit', (_code, signal) => resolve(signal)));
    for await (const line of createInterface({ input: child.stdout })) if (line === 'both stored') break;
    child.kill('SIGKILL');
    expect(await exited).toBe('SIGKILL');
    expect(readFileSync(readLog, 'utf8')).toBe('1 moon\n');

    const runtime = createRuntime({ tools: [steeredTool(readLog, async () => {})], store: openStore(path) });
    await runtime.ready;
    expect(await runtime.steer('steered_1', 'finish')).toEqual({ callId: 'steered_1', messageSeq: 3 });
    const reply = await runtime.wait('steered_1', { timeoutMs: 30_000 });
    expect(reply).toMatchObject({ status: 'succeeded', output: { read: ['sun'], attempt: 2 } });
    await runtime.close();
    expect(readFileSync(readLog, 'utf8')).toBe('1 moon\n2 sun\n2 finish\n');

    const observer = openStore(path);
    const events = await observer.listEvents('steered_1');
    const read = events.flatMap((event) =>
      event.type === 'message' ? [[event.messageSeq, event.message]] : [],
    );
    expect(read).toEqual([
      [1, 'moon'],
      [2, 'sun'],
      [3, 'finish'],
    ]);
    expect(await observer.getCall('steered_1')).toMatchObject({ status: 'succeeded', messagesRead: 3 });
    await observer.close();
  });
});
