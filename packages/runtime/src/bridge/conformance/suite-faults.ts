import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Store } from '@baton/store';
import { expect, it } from 'vitest';
import type { Runtime } from '../../runtime-api.js';
import type { BridgeConversation, BridgeDriver } from './driver.js';
import {
  batonId,
  DYING_CALL,
  type DyingScenario,
  deployed,
  eventually,
  found,
  halfWay,
  STILL_RUNNING,
  SUITE_BUDGET_MS,
  type SuiteRuntime,
  stale,
  suiteRuntime,
  timesIn,
} from './suite-runtime.js';

/** What the suite's cases share (see suite.ts). */
export interface SuiteContext {
  driver: BridgeDriver;
  sessionId: string;
  /** The words of the acknowledgement the model hears past the budget. */
  acknowledged: string;
  sqliteStore: (path: string) => Store;
  setUp(): Promise<{ suite: SuiteRuntime; conversation: BridgeConversation }>;
  open(suite: { runtime: Runtime }, again?: boolean): Promise<BridgeConversation>;
  /** A call of `tool` on `topic`, acknowledged at its budget in a turn of its own: its id. */
  backgrounded(
    suite: SuiteRuntime,
    conversation: BridgeConversation,
    tool: string,
    topic: string,
  ): Promise<string>;
  queued(runtime: Runtime): Promise<number>;
  /** Pull: nothing to wait for. Push: the kit has put what it may put now. */
  putNow(runtime: Runtime, expected: number): Promise<void>;
  /** Runs after the case, last added first. */
  cleanup(step: () => unknown): void;
}

/** Resolves with `promise`, moving the suite's clock on by the budget until it settles. */
async function ticking<T>(suite: SuiteRuntime, promise: Promise<T>): Promise<T> {
  let settled = false;
  const done = promise.finally(() => {
    settled = true;
  });
  while (!settled) {
    suite.clock.increment(SUITE_BUDGET_MS);
    await sleep(5);
  }
  return done;
}

/**
 * How many reminders that a call still runs `text` holds: in words, or as the structured output
 * where the framework takes a function's result as data (Gemini Live).
 */
const remindersIn = (text: string | undefined) =>
  Math.max(timesIn(text, STILL_RUNNING), timesIn(text, '"running_for_ms"'));

/** The words the model is told of a rejected call. */
const REJECTED = 'The tool call was rejected';

/**
 * The delivery suite's cases around faults and decisions: an approval approved (the end within
 * the budget and past it) and one rejected, a reminder, a stalled attempt tried again, and a
 * process SIGKILLed between the hold and the acknowledgement, and with an update and a reminder
 * queued. In each, every result reaches the model once.
 */
export function describeDeliveryFaults(context: SuiteContext): void {
  const { driver, sessionId, setUp, backgrounded, queued, putNow } = context;
  /** The model's next turns each start with `text` once (a pull turn's input holds the history). */
  const givenOnce = async (conversation: BridgeConversation, text: string) => {
    expect(timesIn((await conversation.turn({})).atStart, text)).toBe(1);
    expect(timesIn((await conversation.turn({})).atStart, text)).toBe(1);
  };
  /**
   * The end reached the model in the tool call's reply (a decision the run waited for): the
   * notification the call told is acknowledged already, and no later turn gives it. The count is
   * the framework's (Mastra keeps a resumed tool result twice in its history); it must not grow.
   */
  const givenByReply = async (suite: SuiteRuntime, conversation: BridgeConversation, text: string) => {
    await putNow(suite.runtime, 0);
    expect(await queued(suite.runtime)).toBe(0);
    const seen = timesIn((await conversation.turn({})).atStart, text);
    expect(seen).toBeGreaterThan(0);
    expect(timesIn((await conversation.turn({})).atStart, text)).toBe(seen);
  };
  /** The call's end is a notification, and the kit put it where it may. */
  const endStored = async (suite: SuiteRuntime, callId: string) => {
    await suite.notified(callId, sessionId);
    await putNow(suite.runtime, 0);
  };

  for (const within of [true, false]) {
    const when = within ? 'within its budget' : 'past its budget';
    it(`approvals (${driver.approvals}): a tool approved that ends ${when} is given its end once`, async () => {
      const { suite, conversation } = await setUp();
      const call = { tool: 'deploy', args: { target: 'prod' }, callId: 'call-deploy' };
      const callId = batonId(conversation, call.callId);
      if (within) suite.end('deploy:prod');
      // Past its budget: the clock moves on until the approved run's reply came (the wait for it
      // may start after the run did).
      const answered = (reply: Promise<string | undefined>) => (within ? reply : ticking(suite, reply));
      const asked = conversation.turn({ call }).then((turn) => turn.told);
      let reply: string | undefined;
      if (driver.approvals === 'pause') {
        await asked;
        reply = await answered(conversation.decide?.(true) ?? Promise.resolve(undefined));
      } else if (driver.approvals === 'permission') reply = await answered(asked);
      else {
        expect(await asked).toContain('needs approval before it runs');
        await suite.runtime.inputs.approve(callId);
      }
      if (driver.approvals !== 'acknowledged') {
        expect(reply).toContain(within ? deployed('prod') : context.acknowledged);
      }
      if (within && driver.approvals !== 'acknowledged') {
        await givenByReply(suite, conversation, deployed('prod'));
        return;
      }
      if (!within) suite.end('deploy:prod');
      await endStored(suite, callId);
      await givenOnce(conversation, deployed('prod'));
      expect(await queued(suite.runtime)).toBe(0);
    });
  }

  if (driver.approvals !== 'permission') {
    it(`approvals (${driver.approvals}): a tool rejected is told so once, and never runs`, async () => {
      const { suite, conversation } = await setUp();
      const call = { tool: 'deploy', args: { target: 'prod' }, callId: 'call-deploy' };
      const callId = batonId(conversation, call.callId);
      suite.end('deploy:prod');
      const { told } = await conversation.turn({ call });
      if (driver.approvals === 'pause') {
        const rejected = driver.rejectedWords ?? REJECTED;
        expect(await conversation.decide?.(false)).toContain(rejected);
        await givenByReply(suite, conversation, rejected);
      } else {
        expect(told).toContain('needs approval before it runs');
        await suite.runtime.inputs.reject(callId, 'not today');
        await endStored(suite, callId);
        await givenOnce(conversation, REJECTED);
      }
      expect(timesIn(await conversation.stored(), deployed('prod'))).toBe(0);
      expect((await suite.runtime.get(callId))?.approval).toBe('rejected');
      expect(await queued(suite.runtime)).toBe(0);
    });
  }

  it('gives a reminder that a call still runs once, and its end once, which replaces it', async () => {
    const { suite, conversation } = await setUp();
    // A call of the session made at another door (the API) with reminders.
    const callId = 'call-reminded';
    const promoted = suite.promoteWhenStarted(callId);
    await suite.runtime.call({
      name: 'research_when_idle',
      args: { topic: 'glaciers' },
      sessionId,
      callId,
      notifyAfterMs: [1_000],
    });
    await promoted;
    suite.clock.increment(1_000);
    await eventually(
      async () =>
        (await suite.runtime.notifications.list({ sessionId })).some(
          (notification) => notification.outcome === 'running',
        ),
      'the reminder is a notification',
    );
    await putNow(suite.runtime, 0);
    expect(remindersIn((await conversation.turn({})).atStart)).toBe(1);
    suite.end('glaciers');
    await endStored(suite, callId);
    expect(timesIn((await conversation.turn({})).atStart, found('glaciers'))).toBe(1);
    expect(remindersIn(await conversation.stored())).toBe(1);
    expect(timesIn(await conversation.stored(), found('glaciers'))).toBe(1);
    expect(await queued(suite.runtime)).toBe(0);
  });

  it('gives the result of the attempt that ran on after a stalled one, once, and never the stalled one’s', async () => {
    const { suite, conversation } = await setUp();
    const callId = await backgrounded(suite, conversation, 'research_stalling', 'dunes');
    await suite.stallAndRetry(callId);
    // Both runs are released: the stalled one's late result is dropped.
    suite.end('dunes');
    await endStored(suite, callId);
    await givenOnce(conversation, found('dunes'));
    expect(timesIn(await conversation.stored(), stale('dunes'))).toBe(0);
    expect(await suite.runtime.get(callId)).toMatchObject({ status: 'succeeded', attempt: 2 });
    expect(await queued(suite.runtime)).toBe(0);
  });

  /** Runs the suite's dying process on a new SQLite file to `scenario`, SIGKILLs it, and opens the store again. */
  const killedIn = async (scenario: DyingScenario) => {
    const dir = mkdtempSync(join(tmpdir(), 'baton-delivery-'));
    context.cleanup(() => rmSync(dir, { recursive: true, force: true }));
    const path = join(dir, 'baton.db');
    const script = createRequire(import.meta.url).resolve('@baton/runtime/bridge/testing/dying-process');
    const child = spawn(process.execPath, [script, path, scenario, sessionId], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const exited = new Promise((resolve) => child.on('exit', (_code, signal) => resolve(signal)));
    for await (const line of createInterface({ input: child.stdout })) if (line === 'ready') break;
    child.kill('SIGKILL');
    expect(await exited).toBe('SIGKILL');
    const after = suiteRuntime({ store: context.sqliteStore(path) });
    context.cleanup(() => after.runtime.close());
    return after;
  };

  it('gives a result once after the process that held it was killed (SIGKILL) before it was acknowledged', async () => {
    const { callId, topic } = DYING_CALL.held;
    const after = await killedIn('held');
    await after.runtime.ready;
    // The killed process's instance is gone: what it held is due again.
    await eventually(
      async () => (await after.runtime.notifications.count({ status: 'queued' })) === 1,
      'queued',
    );
    const conversation = await context.open(after);
    await putNow(after.runtime, 0);
    await givenOnce(conversation, found(topic));
    expect((await after.runtime.get(callId))?.status).toBe('succeeded');
    expect(await queued(after.runtime)).toBe(0);
  });

  it('gives the end alone of a call whose process was killed with an update and a reminder queued', async () => {
    const { callId, topic } = DYING_CALL.told;
    const after = await killedIn('told');
    // Taken up here and run again: it ends at once (its update told again, and replaced by the end).
    after.report(topic);
    after.end(topic);
    await after.runtime.ready;
    await eventually(async () => {
      after.clock.increment(1_000);
      return (await after.runtime.get(callId))?.status === 'succeeded';
    }, `${callId} ended after it was taken up`);
    await after.notified(callId, sessionId);
    const conversation = await context.open(after);
    await putNow(after.runtime, 0);
    const turn = await conversation.turn({});
    expect(timesIn(turn.atStart, found(topic))).toBe(1);
    expect(timesIn(turn.atStart, halfWay(topic))).toBe(0);
    expect(remindersIn(turn.atStart)).toBe(0);
    expect(await queued(after.runtime)).toBe(0);
  });
}
