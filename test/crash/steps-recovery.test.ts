import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { createRuntime } from '@baton/runtime';
import { sqliteStore } from '@baton/store-sqlite';
import { afterAll, describe, expect, it } from 'vitest';
// A plain ES module, shared with the child process.
import { twoStepTool } from './step-tools.mjs';

const dir = mkdtempSync(join(tmpdir(), 'baton-steps-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('durable steps across a crash', () => {
  it('does not run a stored step again after recovery, and runs the next one once', async () => {
    const path = join(dir, 'steps.db');
    const runLog = join(dir, 'runs.log');
    const child = spawn(process.execPath, [join(import.meta.dirname, 'dying-after-step.mjs'), path, runLog], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const exited = new Promise((resolve) => child.on('exit', (_code, signal) => resolve(signal)));
    for await (const line of createInterface({ input: child.stdout })) if (line === 'step one stored') break;
    child.kill('SIGKILL');
    expect(await exited).toBe('SIGKILL');
    expect(readFileSync(runLog, 'utf8')).toBe('one\n');

    const runtime = createRuntime({
      tools: [twoStepTool(runLog, async () => {})],
      store: sqliteStore({ path }),
    });
    await runtime.ready;
    for (let turn = 0; turn < 1_000 && runtime.stats().active > 0; turn++) {
      await new Promise((resolve) => setImmediate(resolve));
    }
    // close() writes what is pending; a second connection reads what a new process would.
    await runtime.close();
    const observer = sqliteStore({ path });
    expect(await observer.getCall('steps_1')).toMatchObject({
      status: 'succeeded',
      attempt: 2,
      result: { first: { fetched: 42 }, second: 43, attempt: 2 },
    });
    expect(readFileSync(runLog, 'utf8')).toBe('one\ntwo\n');
    await observer.close();
  });
});
