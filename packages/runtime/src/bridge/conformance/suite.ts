import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Store } from '@baton/store';
import { afterEach, describe, expect, it } from 'vitest';
import type { Runtime } from '../../runtime-api.js';
import { idleTurns } from '../idle-turns.js';
import type { BridgeConversation, BridgeDriver } from './driver.js';
import { describeDeliveryFaults } from './suite-faults.js';
import {
  batonId,
  eventually,
  found,
  halfWay,
  SUITE_BUDGET_MS,
  type SuiteRuntime,
  suiteRuntime,
  timesIn,
} from './suite-runtime.js';

/** The words of the acknowledgement the model hears past the budget. */
const ACKNOWLEDGED = 'continuing in the background';
const SESSION = 'conformance';
/** What the model answers in the turn a result starts. */
const ANSWER = 'The comets came back.';

export interface BridgeConformanceOptions {
  /** A SQLite store at a file, for the restart between the acknowledgement and the result (`sqliteStore({ path })`). */
  sqliteStore: (path: string) => Store;
}

/**
 * Runs the bridge contract against a bridge, through its driver: the inline reply; past the
 * budget the acknowledgement and exactly one delivery; each scheduling; a step (or a send) that
 * fails after the result was given; cancellation; approvals; a restart on SQLite between the
 * acknowledgement and the result.
 */
export function describeBridgeConformance(
  name: string,
  driver: BridgeDriver,
  { sqliteStore }: BridgeConformanceOptions,
): void {
  describe(`Bridge conformance: ${name}`, { timeout: 60_000 }, () => {
    const cleanups: Array<() => unknown> = [];
    afterEach(async () => {
      for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
    });
    const open = async (suite: { runtime: Runtime }, again = false): Promise<BridgeConversation> => {
      const conversation = await (again && driver.reopen ? driver.reopen : driver.open)(
        suite.runtime,
        SESSION,
      );
      cleanups.push(() => conversation.close());
      return conversation;
    };
    const setUp = async () => {
      const suite = suiteRuntime();
      cleanups.push(() => suite.runtime.close());
      return { suite, conversation: await open(suite) };
    };
    /** A research call acknowledged at its budget in a turn of its own. */
    const backgrounded = async (
      suite: SuiteRuntime,
      conversation: BridgeConversation,
      tool: string,
      topic: string,
    ) => {
      const callId = `call-${topic}`;
      const promoted = suite.promoteWhenStarted(batonId(conversation, callId));
      const { told } = await conversation.turn({ call: { tool, args: { topic }, callId } });
      await promoted;
      expect(told).toContain(ACKNOWLEDGED);
      return batonId(conversation, callId);
    };
    const queued = async (runtime: Runtime) =>
      (await runtime.notifications.list({ sessionId: SESSION, status: 'queued' })).length;
    /** Pull: nothing to wait for. Push: the kit has put what it may put now. */
    const putNow = (runtime: Runtime, expected: number) =>
      driver.delivery === 'push'
        ? eventually(async () => (await queued(runtime)) === expected, `${expected} results left queued`)
        : Promise.resolve();

    it('answers a fast call with its result, within its turn', async () => {
      const { conversation } = await setUp();
      const { told } = await conversation.turn({
        call: { tool: 'look_up', args: { word: 'hello' }, callId: 'call-1' },
      });
      expect(told).toContain('hello: a greeting');
    });

    it("answers a tool's error with its own words", async () => {
      const { conversation } = await setUp();
      const { told } = await conversation.turn({
        call: { tool: 'look_up', args: { word: 'nothing' }, callId: 'call-1' },
      });
      expect(told).toContain('No entry for');
    });

    it('acknowledges a call past its budget at once, then gives its result exactly once', async () => {
      const { suite, conversation } = await setUp();
      const callId = await backgrounded(suite, conversation, 'research_when_idle', 'tides');
      expect((await suite.runtime.get(callId))?.status).toBe('backgrounded');
      suite.end('tides');
      await suite.notified(callId, SESSION);
      await putNow(suite.runtime, 0);
      expect(timesIn((await conversation.turn({})).atStart, found('tides'))).toBe(1);
      expect(timesIn((await conversation.turn({})).atStart, found('tides'))).toBe(1);
      expect(await queued(suite.runtime)).toBe(0);
    });

    for (const scheduling of ['interrupt', 'silent'] as const) {
      it(`${scheduling}: gives a result that ends mid-run at the next step, after the tool results`, async () => {
        const { suite, conversation } = await setUp();
        const callId = await backgrounded(suite, conversation, `research_${scheduling}`, 'moons');
        const turn = await conversation.turn({
          call: { tool: 'look_up', args: { word: 'hi' }, callId: 'call-hi' },
          between: async () => {
            suite.end('moons');
            await suite.notified(callId, SESSION);
            await putNow(suite.runtime, 0);
          },
        });
        expect(timesIn(turn.atStart, found('moons'))).toBe(0);
        expect(timesIn(turn.afterCall, found('moons'))).toBe(1);
        expect(timesIn((await conversation.turn({})).atStart, found('moons'))).toBe(1);
      });
    }

    it('steers a call in the background with steer_background: the tool reads the message, and its result comes once', async () => {
      const { suite, conversation } = await setUp();
      const callId = await backgrounded(suite, conversation, 'research_steered', 'tides');
      const message = { call_id: callId, message: 'the harbour' };
      const { told } = await conversation.turn({
        call: { tool: 'steer_background', args: message, callId: 'call-steer' },
      });
      expect(told).toContain('The message is stored');
      await suite.notified(callId, SESSION);
      await putNow(suite.runtime, 0);
      const steeredFound = found('tides at the harbour');
      expect(timesIn((await conversation.turn({})).atStart, steeredFound)).toBe(1);
      expect(timesIn((await conversation.turn({})).atStart, steeredFound)).toBe(1);
      expect(await queued(suite.runtime)).toBe(0);
    });

    it('gives an update of a call in the background by its scheduling, once, and not after the end that replaces it', async () => {
      const { suite, conversation } = await setUp();
      const callId = await backgrounded(suite, conversation, 'research_reporting', 'tides');
      suite.report('tides');
      await eventually(
        async () =>
          (await suite.runtime.notifications.list({ sessionId: SESSION })).some(
            (notification) => notification.outcome === 'running',
          ),
        'the update is a notification',
      );
      await putNow(suite.runtime, 0);
      expect(timesIn((await conversation.turn({})).atStart, halfWay('tides'))).toBe(1);
      suite.end('tides');
      await suite.notified(callId, SESSION);
      await putNow(suite.runtime, 0);
      expect(timesIn((await conversation.turn({})).atStart, found('tides'))).toBe(1);
      // What the framework keeps has the update once: it was not given again with the end.
      expect(timesIn(await conversation.stored(), halfWay('tides'))).toBe(1);
      expect(timesIn(await conversation.stored(), found('tides'))).toBe(1);
      expect(await queued(suite.runtime)).toBe(0);
    });

    it('when_idle: keeps a result that ends mid-run until the turn is over, then gives it once', async () => {
      const { suite, conversation } = await setUp();
      const callId = await backgrounded(suite, conversation, 'research_when_idle', 'lakes');
      const turn = await conversation.turn({
        call: { tool: 'look_up', args: { word: 'hi' }, callId: 'call-hi' },
        between: async () => {
          suite.end('lakes');
          await suite.notified(callId, SESSION);
        },
      });
      expect(timesIn(turn.afterCall, found('lakes'))).toBe(0);
      await putNow(suite.runtime, 0);
      expect(timesIn((await conversation.turn({})).atStart, found('lakes'))).toBe(1);
      expect(await queued(suite.runtime)).toBe(0);
    });

    it('gives a result again when the step (or the send) that was given it failed, and it is seen once', async () => {
      const { suite, conversation } = await setUp();
      const callId = await backgrounded(suite, conversation, 'research_when_idle', 'rivers');
      const ending = async () => {
        suite.end('rivers');
        await suite.notified(callId, SESSION);
      };
      if (driver.delivery === 'pull') {
        await ending();
        await expect(conversation.turn({ fails: true })).rejects.toThrow();
        // Not acknowledged: the model did not have it.
        expect(await queued(suite.runtime)).toBe(1);
      } else {
        // The put at the turn's end throws: the result is kept for the next send (which may be at
        // once, where the bridge sends again at the turn's end).
        await conversation.turn({ fails: true, between: ending });
      }
      await conversation.turn({});
      await putNow(suite.runtime, 0);
      const next = await conversation.turn({});
      expect(timesIn(next.atStart, found('rivers'))).toBe(1);
      expect(await queued(suite.runtime)).toBe(0);
    });

    it("starts a turn of its own from the kit's callback for a result that comes while idle, and the framework keeps it", async () => {
      const { suite, conversation } = await setUp();
      const callId = await backgrounded(suite, conversation, 'research_when_idle', 'comets');
      if (driver.delivery === 'pull') {
        // Subscribed here, outside any turn; the result ends inside the tool call's own context.
        const turned = new Promise<string>((resolve, reject) => {
          const watching = idleTurns(suite.runtime, { sessionId: SESSION }).subscribe(() => {
            watching.unsubscribe();
            conversation.turn({ answer: ANSWER }).then((turn) => resolve(turn.atStart), reject);
          });
        });
        suite.end('comets');
        expect(timesIn(await turned, found('comets'))).toBe(1);
        // The turn is a root turn of its framework: what it kept holds the model's answer too.
        expect(timesIn(await conversation.stored(), ANSWER)).toBe(1);
      } else {
        // The kit puts it into the live conversation by itself.
        suite.end('comets');
        await suite.notified(callId, SESSION);
        await putNow(suite.runtime, 0);
      }
      expect(timesIn(await conversation.stored(), found('comets'))).toBe(1);
      await conversation.turn({});
      expect(timesIn(await conversation.stored(), found('comets'))).toBe(1);
    });

    it('cancels a call the framework cancels within its budget: it ends cancelled, and nothing of it comes back', async () => {
      const { suite, conversation } = await setUp();
      await conversation.turn({
        call: { tool: 'research_when_idle', args: { topic: 'storms' }, callId: 'call-storms' },
        cancels: true,
      });
      await eventually(
        async () => (await suite.runtime.get(batonId(conversation, 'call-storms')))?.status === 'cancelled',
        'the call is cancelled',
      );
      expect(timesIn((await conversation.turn({})).atStart, found('storms'))).toBe(0);
      expect(await suite.runtime.notifications.list({ sessionId: SESSION })).toEqual([]);
    });

    it(`approvals (${driver.approvals}): a tool that needs approval runs once it is approved`, async () => {
      const { suite, conversation } = await setUp();
      const call = { tool: 'transfer', args: { amount: 5 }, callId: 'call-transfer' };
      const callId = batonId(conversation, call.callId);
      const { told } = await conversation.turn({ call });
      if (driver.approvals === 'permission') {
        expect(told).toContain('transferred 5');
      } else if (driver.approvals === 'pause') {
        expect((await suite.runtime.get(callId))?.approval).toBe('pending');
        expect(await conversation.decide?.(true)).toContain('transferred 5');
      } else {
        // No confirmation step: acknowledged, waiting, recorded, for a decision from outside.
        expect(told).toContain('needs approval before it runs');
        expect((await suite.runtime.get(callId))?.approval).toBe('pending');
        await suite.runtime.inputs.approve(callId);
        await suite.notified(callId, SESSION);
        await putNow(suite.runtime, 0);
        expect(timesIn((await conversation.turn({})).atStart, 'transferred 5')).toBe(1);
      }
      expect((await suite.runtime.get(callId))?.approval).toBe('approved');
    });

    describeDeliveryFaults({
      driver,
      sessionId: SESSION,
      acknowledged: ACKNOWLEDGED,
      sqliteStore,
      setUp,
      open,
      backgrounded,
      queued,
      putNow,
      cleanup: (step) => cleanups.push(step),
    });

    it('gives the result once after a restart of the runtime on SQLite between the acknowledgement and the result', async () => {
      const dir = mkdtempSync(join(tmpdir(), 'baton-bridge-'));
      cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
      const path = join(dir, 'baton.db');
      const before = suiteRuntime({ store: sqliteStore(path), hangs: true });
      const first = await open(before);
      const callId = await backgrounded(before, first, 'research_when_idle', 'tides');
      await first.close();
      await before.runtime.close();
      const after = suiteRuntime({ store: sqliteStore(path) });
      cleanups.push(() => after.runtime.close());
      after.end('tides');
      await after.recovered(callId, SESSION);
      const next = await open(after, true);
      await putNow(after.runtime, 0);
      expect(timesIn((await next.turn({})).atStart, found('tides'))).toBe(1);
      expect(timesIn((await next.turn({})).atStart, found('tides'))).toBe(1);
      expect(await queued(after.runtime)).toBe(0);
    });
  });
}

export { SUITE_BUDGET_MS };
