import { memoryStore } from '@baton/store';
import { describe, expect, it } from 'vitest';
import { pullDelivery } from '../src/bridge/index.js';
import { gatedTool, settle, testRuntime } from './helpers.js';

/** A runtime with a background tool per scheduling, each of whose runs ends when the test says. */
async function endedOnePerScheduling() {
  const urgent = gatedTool('urgent', { mode: 'background', scheduling: 'interrupt' });
  const quiet = gatedTool('quiet', { mode: 'background', scheduling: 'silent' });
  const plain = gatedTool('plain', { mode: 'background', scheduling: 'when_idle' });
  const { runtime } = testRuntime([urgent.tool, quiet.tool, plain.tool]);
  for (const name of ['urgent', 'quiet', 'plain']) await runtime.call({ name, sessionId: 's1' });
  for (const { runs } of [urgent, quiet, plain]) runs[0]?.resolve('ok');
  await settle();
  return runtime;
}

const names = (taken: readonly { toolName: string }[]) => taken.map((notification) => notification.toolName);

describe('pull delivery: results given at a step, acknowledged once the model has them', () => {
  it('gives interrupt and silent results at any step and when_idle ones when idle, each once', async () => {
    const runtime = await endedOnePerScheduling();
    const delivery = pullDelivery(runtime, { sessionId: 's1' });
    expect(names(await delivery.take({ idle: false }))).toEqual(['urgent', 'quiet']);
    expect(names(await delivery.take({ idle: false }))).toEqual([]);
    expect(names(await delivery.take({ idle: true }))).toEqual(['plain']);
    expect(names(delivery.held)).toEqual(['urgent', 'quiet', 'plain']);
    await delivery.confirm();
    expect(delivery.held).toEqual([]);
    expect(await runtime.notifications.list({ sessionId: 's1', status: 'queued' })).toEqual([]);
    expect(await delivery.take({ idle: true })).toEqual([]);
  });

  it('acknowledges nothing before confirm: a result taken stays queued in the store', async () => {
    const runtime = await endedOnePerScheduling();
    const delivery = pullDelivery(runtime, { sessionId: 's1' });
    await delivery.take({ idle: true });
    expect(names(await runtime.notifications.list({ sessionId: 's1', status: 'queued' }))).toEqual([
      'urgent',
      'quiet',
      'plain',
    ]);
  });

  it('gives the results of a step that failed again at the next take, and once confirmed never again', async () => {
    const runtime = await endedOnePerScheduling();
    const delivery = pullDelivery(runtime, { sessionId: 's1' });
    expect(names(await delivery.take({ idle: true }))).toEqual(['urgent', 'quiet', 'plain']);
    await delivery.release();
    expect(names(await delivery.take({ idle: true }))).toEqual(['urgent', 'quiet', 'plain']);
    await delivery.confirm();
    expect(await delivery.take({ idle: true })).toEqual([]);
  });

  it('confirms only the results named, and keeps the others held', async () => {
    const runtime = await endedOnePerScheduling();
    const delivery = pullDelivery(runtime, { sessionId: 's1' });
    const [urgent] = await delivery.take({ idle: false });
    await delivery.confirm(urgent ? [urgent] : []);
    expect(names(delivery.held)).toEqual(['quiet']);
    expect(names(await runtime.notifications.list({ sessionId: 's1', status: 'queued' }))).toEqual([
      'quiet',
      'plain',
    ]);
  });

  it('holds a result for the loop that took it: another loop of the session does not take it meanwhile', async () => {
    const runtime = await endedOnePerScheduling();
    const first = pullDelivery(runtime, { sessionId: 's1' });
    const second = pullDelivery(runtime, { sessionId: 's1' });
    expect(names(await first.take({ idle: false }))).toEqual(['urgent', 'quiet']);
    expect(names(await second.take({ idle: true }))).toEqual(['plain']);
    await first.release();
    expect(names(await second.take({ idle: true }))).toEqual(['urgent', 'quiet']);
  });

  it('holds a result in the store for its runtime: another runtime on the store takes it only once the first is gone', async () => {
    const store = memoryStore();
    const research = gatedTool('research', { mode: 'background', scheduling: 'interrupt' });
    const { runtime: first } = testRuntime([research.tool], { store });
    const { runtime: second } = testRuntime([research.tool], { store });
    await first.call({ name: 'research', sessionId: 's1' });
    research.runs[0]?.resolve('ok');
    await settle();
    expect(names(await pullDelivery(first, { sessionId: 's1' }).take({ idle: false }))).toEqual(['research']);
    const other = pullDelivery(second, { sessionId: 's1' });
    expect(await other.take({ idle: true })).toEqual([]);
    // The first process is gone before its model saw the result: the second gives it.
    await first.close();
    expect(names(await other.take({ idle: true }))).toEqual(['research']);
  });

  it("gives nothing of another session's", async () => {
    const runtime = await endedOnePerScheduling();
    expect(await pullDelivery(runtime, { sessionId: 's2' }).take({ idle: true })).toEqual([]);
  });
});
