import { describe, expect, it } from 'vitest';
import { gatedTool, settle, storedEvents, testRuntime } from './helpers.js';

/** The names of 0.1 that moved stay, deprecated, for one release: each still does what it did. */
describe('the deprecated names of 0.1', () => {
  it('followCall, followSession, callEvents$, sessionEvents$ and replay read the same events as follow', async () => {
    const { tool, runs } = gatedTool('work');
    const { runtime } = testRuntime([tool]);
    const live: string[] = [];
    runtime.callEvents$('c1').subscribe((event) => live.push(`call:${event.type}`));
    runtime.sessionEvents$('s').subscribe((event) => live.push(`session:${event.type}`));
    const pending = runtime.call({ name: 'work', sessionId: 's', callId: 'c1' });
    await settle();
    runs[0]?.resolve('done');
    await pending;
    await settle();
    const stored = await storedEvents(runtime, 'c1');
    expect(stored.map((event) => event.type)).toEqual(['queued', 'started', 'succeeded']);
    expect(live.filter((line) => line.startsWith('call:'))).toEqual(
      stored.map((event) => `call:${event.type}`),
    );
    expect(live.filter((line) => line.startsWith('session:'))).toHaveLength(3);
    expect(await runtime.replay('c1', 2)).toEqual(stored.slice(1));
    const followed: number[] = [];
    runtime.followCall('c1', 1).subscribe((event) => followed.push(event.seq));
    const session: number[] = [];
    runtime.followSession('s', 0).subscribe((event) => session.push(event.position));
    await settle();
    expect(followed).toEqual([2, 3]);
    expect(session).toHaveLength(3);
  });

  it('approve, reject, eventKey and resolveEvent are inputs.approve, inputs.reject, inputs.key and inputs.resolve', async () => {
    const { tool } = gatedTool('deploy', { needsApproval: true });
    const { runtime } = testRuntime([tool]);
    await runtime.call({ name: 'deploy', sessionId: 's', callId: 'd1' });
    await runtime.call({ name: 'deploy', sessionId: 's', callId: 'd2' });
    expect(await runtime.approve('d1')).toBe(true);
    expect(await runtime.reject('d2', 'no')).toBe(true);
    await settle();
    expect((await runtime.get('d1'))?.approval).toBe('approved');
    expect((await runtime.get('d2'))?.error?.code).toBe('approval_rejected');
    expect(runtime.eventKey('c1', 'ok')).toBe(runtime.inputs.key('c1', 'ok'));
    await expect(runtime.resolveEvent('not a key', { value: 1 })).rejects.toMatchObject({
      code: 'invalid_arguments',
    });
  });
});
