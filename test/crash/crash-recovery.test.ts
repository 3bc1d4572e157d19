import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { isTerminalStatus } from '@baton/contracts';
import { createRuntime, type Runtime } from '@baton/runtime';
import type { Store } from '@baton/store';
import { type ThrowawayPostgres, throwawayPostgres } from '@baton/store-postgres/testing';
import { sqliteStore } from '@baton/store-sqlite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
// A plain ES module, shared with the child process.
import { openStore } from './stores.mjs';
import { crashTools } from './tools.mjs';

const dir = mkdtempSync(join(tmpdir(), 'baton-crash-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

interface Report {
  /** The dying process's PID as it saw it (1 in a PID namespace of its own). */
  pid?: number;
  accepted: Map<string, string>;
  started: Set<string>;
  backgrounded: Set<string>;
}

/** The runtime's default concurrency: of more calls than this, the rest wait in the queue. */
const CONCURRENCY = 64;

/**
 * A command that runs Node as PID 1 of a new PID namespace, as a container's entry point runs:
 * two such processes, one after the other, have the same PID. `--kill-child` passes a SIGKILL of
 * `unshare` on to Node.
 */
const AS_PID_1 = ['unshare', '--pid', '--fork', '--kill-child', process.execPath];

/**
 * Runs the dying runtime until every call is accepted, every slot runs a call and every auto call
 * went to the background, then SIGKILLs it: some calls are inline, some backgrounded, some queued.
 */
async function runAndKill(path: string, perTool: number, asPid1 = false): Promise<Report> {
  const [command, ...prefix] = asPid1 ? AS_PID_1 : [process.execPath];
  const child: ChildProcess = spawn(
    command as string,
    [...prefix, join(import.meta.dirname, 'dying-runtime.mjs'), path, String(perTool)],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  const report: Report = { accepted: new Map(), started: new Set(), backgrounded: new Set() };
  const total = perTool * 4;
  const autoCalls = perTool * 2;
  const exited = new Promise<NodeJS.Signals | null>((resolve) =>
    child.on('exit', (_code, signal) => resolve(signal)),
  );
  for await (const line of createInterface({ input: child.stdout as NodeJS.ReadableStream })) {
    const message = JSON.parse(line) as {
      pid?: number;
      accepted?: string;
      tool?: string;
      started?: string;
      backgrounded?: string;
    };
    if (message.pid !== undefined) report.pid = message.pid;
    if (message.accepted && message.tool) report.accepted.set(message.accepted, message.tool);
    if (message.started) report.started.add(message.started);
    if (message.backgrounded) report.backgrounded.add(message.backgrounded);
    const settled =
      report.accepted.size === total &&
      report.started.size === Math.min(total, CONCURRENCY) &&
      report.backgrounded.size === autoCalls;
    if (settled) break;
  }
  child.kill('SIGKILL');
  expect(await exited).toBe('SIGKILL');
  return report;
}

async function untilIdle(runtime: Runtime): Promise<void> {
  for (let turn = 0; turn < 1_000 && runtime.stats().active > 0; turn++) {
    await new Promise((resolve) => setImmediate(resolve));
  }
}

describe('a runtime killed with SIGKILL while calls run inline and in the background', () => {
  it('loses no accepted call: each ends once; started idempotent ones re-run as attempt 2, other started ones end interrupted, queued ones run', async () => {
    const path = join(dir, 'crash.db');
    const perTool = 25;
    const report = await runAndKill(path, perTool);
    expect(report.accepted.size).toBe(perTool * 4);
    const queuedAtKill = [...report.accepted.keys()].filter((callId) => !report.started.has(callId));
    expect(queuedAtKill.length).toBe(perTool * 4 - CONCURRENCY);
    expect(report.backgrounded.size).toBe(perTool * 2);

    // Two runtimes open the file at once: each orphan must be recovered by exactly one of them.
    const ranIn: string[] = [];
    const open = () =>
      createRuntime({
        tools: crashTools(({ n, attempt }: { n: number; attempt: number }) => {
          ranIn.push(`#${attempt}`);
          return { n, attempt };
        }),
        store: sqliteStore({ path }),
      });
    const recoverers = [open(), open()];
    await Promise.all(recoverers.map((runtime) => runtime.ready));
    await Promise.all(recoverers.map(untilIdle));
    // close() writes what is pending; a second connection reads what a new process would.
    await Promise.all(recoverers.map((runtime) => runtime.close()));
    await expectEachAcceptedCallEndedOnce(path, report, queuedAtKill, ranIn);
  });
});

/**
 * Every accepted call ended exactly once: a queued one ran (attempt 1), a started idempotent one
 * ran again (attempt 2), any other started one ended `interrupted`; each backgrounded call has one
 * notification; and nothing ran more often than that.
 */
async function expectEachAcceptedCallEndedOnce(
  path: string,
  report: Report,
  queuedAtKill: readonly string[],
  ranIn: readonly string[],
): Promise<void> {
  const reader: Store = openStore(path);

  for (const [callId, tool] of report.accepted) {
    const record = await reader.getCall(callId);
    expect(record && isTerminalStatus(record.status)).toBe(true);
    const terminalEvents = (await reader.listEvents(callId)).filter((event) =>
      ['succeeded', 'failed', 'cancelled', 'timed_out'].includes(event.type),
    );
    expect(terminalEvents).toHaveLength(1);
    if (!report.started.has(callId)) {
      // It never ran, so running it now cannot do anything twice.
      expect(record).toMatchObject({ status: 'succeeded', attempt: 1 });
    } else if (tool.startsWith('safe')) {
      expect(record).toMatchObject({ status: 'succeeded', attempt: 2 });
    } else {
      expect(record).toMatchObject({ status: 'failed', attempt: 1, error: { code: 'interrupted' } });
    }
    const notifications = (await reader.listNotifications()).filter((n) => n.callId === callId);
    expect(notifications).toHaveLength(report.backgrounded.has(callId) ? 1 : 0);
  }
  // Each started idempotent call ran again once, and each queued call ran for the first time.
  const startedSafe = [...report.started].filter((callId) => report.accepted.get(callId)?.startsWith('safe'));
  expect(ranIn.filter((run) => run === '#2')).toHaveLength(startedSafe.length);
  expect(ranIn.filter((run) => run === '#1')).toHaveLength(queuedAtKill.length);
  expect(ranIn).toHaveLength(startedSafe.length + queuedAtKill.length);
  await reader.close();
}

let postgres: ThrowawayPostgres;
beforeAll(async () => {
  postgres = await throwawayPostgres();
}, 60_000);
afterAll(() => postgres.stop());

describe.each([
  ['SQLite', () => join(dir, 'same-pid.db')],
  ['PostgreSQL', () => `${postgres.url}#crash_same_pid_${process.pid}`],
])(
  'a runtime on %s killed with SIGKILL, then restarted as a new process with the same PID',
  (_store, location) => {
    it("recovers every accepted call at once, though a live process has the dead one's PID and its lease has not lapsed", async () => {
      const path = location();
      const perTool = 20;
      const report = await runAndKill(path, perTool, true);
      expect(report.pid).toBe(1);
      const queuedAtKill = [...report.accepted.keys()].filter((callId) => !report.started.has(callId));
      const recoverer = spawn(
        AS_PID_1[0] as string,
        [...AS_PID_1.slice(1), join(import.meta.dirname, 'recovering-runtime.mjs'), path],
        {
          stdio: ['ignore', 'pipe', 'inherit'],
        },
      );
      let said = '';
      recoverer.stdout?.on('data', (chunk: Buffer) => {
        said += chunk.toString();
      });
      const code = await new Promise<number | null>((resolve) => recoverer.on('exit', resolve));
      expect(code).toBe(0);
      const { pid, runs } = JSON.parse(said) as { pid: number; runs: string[] };
      expect(pid).toBe(1);
      await expectEachAcceptedCallEndedOnce(path, report, queuedAtKill, runs);
    });
  },
);
