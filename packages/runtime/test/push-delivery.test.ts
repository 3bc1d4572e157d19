import type { Notification, Scheduling } from '@baton/contracts';
import { describe, expect, it } from 'vitest';
import { type PushTarget, pushDelivery } from '../src/bridge/index.js';
import { gatedTool, settle, testRuntime } from './helpers.js';

/** A live conversation as a test holds it: what was put, by scheduling, and switches for the rest. */
function liveTarget() {
  const put: Array<[Scheduling, string[]]> = [];
  const state = { idle: true, connected: true, failing: 0 };
  const target: PushTarget = {
    isIdle: () => state.idle,
    isConnected: () => state.connected,
    put(results: readonly Notification[], scheduling: Scheduling) {
      if (state.failing > 0) {
        state.failing--;
        throw new Error('the socket closed under the send');
      }
      put.push([
        scheduling,
        results.map((result) => String(result.output && (result.output as { result?: unknown }).result)),
      ]);
    },
  };
  return { target, put, state };
}

function setUp() {
  const research = gatedTool('research', { mode: 'background', scheduling: 'when_idle' });
  const urgent = gatedTool('urgent', { mode: 'background', scheduling: 'interrupt' });
  const quiet = gatedTool('quiet', { mode: 'background', scheduling: 'silent' });
  const { runtime } = testRuntime([research.tool, urgent.tool, quiet.tool]);
  const { target, put, state } = liveTarget();
  const errors: unknown[] = [];
  const delivery = pushDelivery(runtime, { sessionId: 's1', target, onError: (error) => errors.push(error) });
  const end = async (name: 'research' | 'urgent' | 'quiet', value: string) => {
    await runtime.call({ name, sessionId: 's1' });
    const runs = { research, urgent, quiet }[name].runs;
    runs.at(-1)?.resolve(value);
    await settle();
    await settle();
  };
  const queued = async () => (await runtime.notifications.list({ sessionId: 's1', status: 'queued' })).length;
  return { runtime, delivery, put, state, errors, end, queued };
}

describe('push delivery: each result put into a live conversation once, by its scheduling', () => {
  it('puts interrupt and silent results as they come, and when_idle ones once the target is idle, together', async () => {
    const { delivery, put, state, end, queued } = setUp();
    state.idle = false;
    await end('research', 'tides');
    await end('research', 'moons');
    await end('urgent', 'fire');
    await end('quiet', 'noted');
    expect(put).toEqual([
      ['interrupt', ['fire']],
      ['silent', ['noted']],
    ]);
    expect(await queued()).toBe(2);
    state.idle = true;
    await delivery.idle();
    await settle();
    expect(put.at(-1)).toEqual(['when_idle', ['tides', 'moons']]);
    expect(await queued()).toBe(0);
    delivery.close();
  });

  it('keeps a result whose send threw after it was given, and puts it once at the next send', async () => {
    const { delivery, put, state, errors, end, queued } = setUp();
    state.failing = 1;
    await end('urgent', 'fire');
    expect(put).toEqual([]);
    expect(errors).toHaveLength(1);
    expect(await queued()).toBe(1);
    await end('urgent', 'smoke');
    expect(put).toEqual([['interrupt', ['fire', 'smoke']]]);
    await delivery.idle();
    await delivery.connected();
    await settle();
    expect(put).toHaveLength(1);
    expect(await queued()).toBe(0);
    delivery.close();
  });

  it('leaves a result that ends while there is no connection in the store, and puts it once connected again', async () => {
    const { delivery, put, state, end, queued } = setUp();
    state.connected = false;
    delivery.disconnected();
    await end('research', 'tides');
    expect(put).toEqual([]);
    expect(await queued()).toBe(1);
    state.connected = true;
    await delivery.connected();
    await delivery.connected();
    await settle();
    expect(put).toEqual([['when_idle', ['tides']]]);
    expect(await queued()).toBe(0);
    delivery.close();
  });

  it('gives the when_idle results waiting at a drop to the next connection', async () => {
    const { delivery, put, state, end } = setUp();
    state.idle = false;
    await end('research', 'tides');
    state.connected = false;
    delivery.disconnected();
    state.connected = true;
    state.idle = true;
    await delivery.connected();
    expect(put).toEqual([['when_idle', ['tides']]]);
    delivery.close();
  });

  it('after close, leaves the results to the next delivery of the session', async () => {
    const { runtime, delivery, put, end, queued } = setUp();
    delivery.close();
    await end('urgent', 'fire');
    expect(put).toEqual([]);
    expect(await queued()).toBe(1);
    const next = liveTarget();
    const again = pushDelivery(runtime, { sessionId: 's1', target: next.target });
    await again.connected();
    expect(next.put).toEqual([['interrupt', ['fire']]]);
    again.close();
  });
});
