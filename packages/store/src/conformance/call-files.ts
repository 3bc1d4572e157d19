import { beforeEach, describe, expect, it } from 'vitest';
import type { Store } from '../store.js';
import { makeCallRecord, makeSchedule } from './records.js';

/** What a call keeps beside its record (artifacts, durable steps, resolutions of its events) and the schedules. `storeOf` is the test's fresh store. */
export function describeCallFiles(storeOf: () => Store): void {
  describe('artifacts, steps, resolutions and schedules', () => {
    let store: Store;
    beforeEach(() => {
      store = storeOf();
    });

    it('keeps the artifacts of a call by name', async () => {
      await store.write({
        calls: [makeCallRecord({ callId: 'c1' })],
        artifacts: [
          { callId: 'c1', name: 'output.log', content: '[stdout] hi' },
          { callId: 'c1', name: 'result.json', content: '{}' },
        ],
      });
      await store.write({ artifacts: [{ callId: 'c1', name: 'result.json', content: '{"ok":true}' }] });
      expect(await store.getArtifact('c1', 'result.json')).toBe('{"ok":true}');
      expect((await store.listArtifacts('c1')).sort()).toEqual(['output.log', 'result.json']);
      expect(await store.getArtifact('c1', 'missing')).toBeUndefined();
    });

    it('keeps the finished durable steps of a call, replaced by step id', async () => {
      await store.write({
        calls: [makeCallRecord({ callId: 'c1' })],
        steps: [
          { callId: 'c1', stepId: 'fetch', value: { pages: 3 } },
          { callId: 'c1', stepId: 'parse', value: 'draft' },
        ],
      });
      await store.write({ steps: [{ callId: 'c1', stepId: 'parse', value: 'final' }] });
      const steps = await store.listSteps('c1');
      expect(steps.sort((a, b) => a.stepId.localeCompare(b.stepId))).toEqual([
        { callId: 'c1', stepId: 'fetch', value: { pages: 3 } },
        { callId: 'c1', stepId: 'parse', value: 'final' },
      ]);
      expect(await store.listSteps('other')).toEqual([]);
    });

    it('keeps the first resolution of an external event', async () => {
      await store.write({
        calls: [makeCallRecord({ callId: 'c1' })],
        resolutions: [{ key: 'k1', callId: 'c1', outcome: { value: { approved: true } }, at: 5 }],
      });
      await store.write({
        resolutions: [{ key: 'k1', callId: 'c1', outcome: { error: 'too late' }, at: 6 }],
      });
      expect(await store.getResolution('k1')).toEqual({
        key: 'k1',
        callId: 'c1',
        outcome: { value: { approved: true } },
        at: 5,
      });
      expect(await store.getResolution('missing')).toBeUndefined();
    });

    it('keeps schedules, listed by session and by whether they are enabled', async () => {
      await store.write({
        schedules: [makeSchedule({ id: 'a' }), makeSchedule({ id: 'b', sessionId: 's2', enabled: false })],
      });
      expect((await store.listSchedules()).map((schedule) => schedule.id).sort()).toEqual(['a', 'b']);
      expect((await store.listSchedules({ sessionId: 's2' })).map((schedule) => schedule.id)).toEqual(['b']);
      expect((await store.listSchedules({ enabled: true })).map((schedule) => schedule.id)).toEqual(['a']);
    });

    it('lets exactly one claimer fire a schedule that is due', async () => {
      await store.write({ schedules: [makeSchedule({ id: 'a', nextAt: 10_000 })] });
      const claims = await Promise.all([
        store.claimFiring('a', 10_000, { nextAt: 20_000, enabled: true }),
        store.claimFiring('a', 10_000, { nextAt: 20_000, enabled: true }),
      ]);
      expect(claims.sort()).toEqual([false, true]);
      expect(await store.listSchedules()).toEqual([makeSchedule({ id: 'a', nextAt: 20_000, firings: 1 })]);
      expect(await store.claimFiring('a', 20_000, { enabled: false })).toBe(true);
      const [done] = await store.listSchedules();
      expect(done).toMatchObject({ enabled: false, firings: 2 });
      expect(done?.nextAt).toBeUndefined();
      expect(await store.claimFiring('a', 20_000, { enabled: false })).toBe(false);
    });
  });
}
