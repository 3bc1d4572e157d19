import { defineTool, ToolError } from '@baton/contracts';
import { memoryStore } from '@baton/store';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createRuntime } from '../src/index.js';
import { deferred, SimulatedClock } from '../src/testing.js';
import { gatedTool, settle, testRuntime } from './helpers.js';

/** A tool that waits for the external event `confirmation` of its call. */
function confirmTool(options: { timeoutMs?: number } = {}) {
  const waiting = deferred<string>();
  const tool = defineTool({
    name: 'confirm',
    description: 'waits for a confirmation from outside',
    input: z.object({}),
    execution: { mode: 'background', idempotent: true },
    async execute(_, ctx) {
      const key = ctx.eventKey('confirmation');
      waiting.resolve(key);
      const answer = await ctx.waitFor<{ ok: boolean }>(key, options);
      return { confirmed: answer.ok };
    },
  });
  return { tool, waiting: waiting.promise };
}

describe('external events (the durable context)', () => {
  it('resolves a wait with the value given from outside; the record shows the key while it waits', async () => {
    const { tool, waiting } = confirmTool();
    const { runtime } = testRuntime([tool]);
    const reply = await runtime.call({ name: 'confirm', sessionId: 's', callId: 'c1' });
    const key = await waiting;
    expect(key).toBe(runtime.inputs.key('c1', 'confirmation'));
    await settle();
    expect((await runtime.get('c1'))?.waitingFor).toBe(key);
    await runtime.inputs.resolve(key, { value: { ok: true } });
    await settle();
    const record = await runtime.get(reply.callId);
    expect(record).toMatchObject({ status: 'succeeded', result: { confirmed: true } });
    expect(record?.waitingFor).toBeUndefined();
  });

  it('fails with event_error, event_timeout or event_cancelled', async () => {
    const errored = confirmTool();
    const first = testRuntime([errored.tool]);
    await first.runtime.call({ name: 'confirm', sessionId: 's', callId: 'c1' });
    await first.runtime.inputs.resolve(await errored.waiting, { error: 'the user said no' });
    await settle();
    expect((await first.runtime.get('c1'))?.error).toEqual({
      code: 'event_error',
      message: 'the user said no',
    });

    const slow = confirmTool({ timeoutMs: 5_000 });
    const second = testRuntime([slow.tool]);
    await second.runtime.call({ name: 'confirm', sessionId: 's', callId: 'c2' });
    await slow.waiting;
    second.clock.increment(5_000);
    await settle();
    expect((await second.runtime.get('c2'))?.error).toEqual({
      code: 'event_timeout',
      message: 'the external event did not come in time',
    });
    expect(second.runtime.stats().timers).toBe(0);

    const cancelledEvent = confirmTool();
    const third = testRuntime([cancelledEvent.tool]);
    await third.runtime.call({ name: 'confirm', sessionId: 's', callId: 'c3' });
    await third.runtime.inputs.resolve(await cancelledEvent.waiting, { cancelled: true });
    await settle();
    expect((await third.runtime.get('c3'))?.error?.code).toBe('event_cancelled');
    expect(third.runtime.stats().timers).toBe(0);
  });

  it('keeps a wait across a restart: the recovered call waits again and gets the event', async () => {
    const store = memoryStore();
    const { tool, waiting } = confirmTool();
    // The first runtime "dies": it is left behind, and its lease lapses on the second one's clock.
    const dead = createRuntime({ tools: [tool], store, clock: new SimulatedClock(), leaseMs: 1_000 });
    await dead.ready;
    await dead.call({ name: 'confirm', sessionId: 's', callId: 'c1' });
    const key = await waiting;
    await settle();

    const again = confirmTool();
    const clock = new SimulatedClock();
    clock.set(10_000);
    const runtime = createRuntime({ tools: [again.tool], store, clock });
    await runtime.ready;
    expect(await again.waiting).toBe(key);
    await runtime.inputs.resolve(key, { value: { ok: true } });
    await settle();
    expect(await runtime.get('c1')).toMatchObject({
      status: 'succeeded',
      attempt: 2,
      result: { confirmed: true },
    });
    await runtime.close();
  });

  it('answers a wait at once with an event resolved while nobody waited', async () => {
    const { tool } = confirmTool();
    const { runtime } = testRuntime([tool]);
    await runtime.inputs.resolve(runtime.inputs.key('early', 'confirmation'), { value: { ok: false } });
    await runtime.call({ name: 'confirm', sessionId: 's', callId: 'early' });
    await settle();
    expect(await runtime.get('early')).toMatchObject({ status: 'succeeded', result: { confirmed: false } });
  });

  it('refuses a key that is not an event key', async () => {
    const { runtime } = testRuntime([]);
    await expect(runtime.inputs.resolve('whatever', { value: 1 })).rejects.toMatchObject({
      code: 'invalid_arguments',
    });
  });
});

describe('approval', () => {
  const needsApproval = () => gatedTool('deploy', { needsApproval: true });

  it('answers backgrounded at once, and runs only once approved', async () => {
    const { tool, runs } = needsApproval();
    const { runtime } = testRuntime([tool]);
    const reply = await runtime.call({ name: 'deploy', args: { env: 'prod' }, sessionId: 's', callId: 'd1' });
    expect(reply).toEqual({
      callId: 'd1',
      status: 'backgrounded',
      output: {
        status: 'awaiting_approval',
        tool: 'deploy',
        message:
          'This tool call needs approval before it runs. Continue the conversation; a later notification will report the result.',
      },
    });
    await settle();
    expect(runs).toHaveLength(0);
    expect((await runtime.get('d1'))?.approval).toBe('pending');
    expect(await runtime.inputs.approve('d1')).toBe(true);
    expect(await runtime.inputs.approve('d1')).toBe(false);
    await settle();
    expect(runs).toHaveLength(1);
    runs[0]?.resolve('deployed');
    await settle();
    expect(await runtime.get('d1')).toMatchObject({ status: 'succeeded', approval: 'approved' });
    expect((await runtime.notifications.list()).map((n) => n.title)).toEqual([
      'Task completed: Background tool: deploy',
    ]);
  });

  it('ends a rejected call failed, with the reason shown to the model, without running it', async () => {
    const { tool, runs } = needsApproval();
    const { runtime } = testRuntime([tool]);
    await runtime.call({ name: 'deploy', sessionId: 's', callId: 'd1' });
    expect(await runtime.inputs.reject('d1', 'not on a Friday')).toBe(true);
    expect(await runtime.get('d1')).toMatchObject({
      status: 'failed',
      approval: 'rejected',
      error: { code: 'approval_rejected', message: 'The tool call was rejected: not on a Friday' },
    });
    expect(runs).toHaveLength(0);
    const [notification] = await runtime.notifications.list();
    expect(notification?.body).toBe(
      'Tool call:\ndeploy({})\nError:\nThe tool call was rejected: not on a Friday',
    );
  });

  it('cancels a call while it waits for approval', async () => {
    const { tool, runs } = needsApproval();
    const { runtime } = testRuntime([tool]);
    await runtime.call({ name: 'deploy', sessionId: 's', callId: 'd1' });
    expect(await runtime.cancel('d1')).toBe(true);
    expect((await runtime.get('d1'))?.status).toBe('cancelled');
    expect(await runtime.inputs.approve('d1')).toBe(false);
    expect(runs).toHaveLength(0);
  });

  it('keeps waiting for approval across a restart, out of the queue, until approved', async () => {
    const store = memoryStore();
    const first = needsApproval();
    const dead = createRuntime({ tools: [first.tool], store, clock: new SimulatedClock(), leaseMs: 1_000 });
    await dead.call({ name: 'deploy', sessionId: 's', callId: 'd1' });
    const second = needsApproval();
    const clock = new SimulatedClock();
    clock.set(10_000);
    const runtime = createRuntime({ tools: [second.tool], store, clock });
    await runtime.ready;
    await settle();
    expect(second.runs).toHaveLength(0);
    expect(await runtime.get('d1')).toMatchObject({
      status: 'queued',
      approval: 'pending',
      ownerId: runtime.instanceId,
    });
    expect(await runtime.inputs.approve('d1')).toBe(true);
    await settle();
    expect(second.runs).toHaveLength(1);
    second.runs[0]?.resolve('deployed');
    await settle();
    expect((await runtime.get('d1'))?.status).toBe('succeeded');
    await runtime.close();
  });

  it('asks a needsApproval function per call', async () => {
    const tool = defineTool({
      name: 'spend',
      description: 's',
      input: z.object({ amount: z.number() }),
      execution: { needsApproval: (args: { amount: number }) => args.amount > 100 },
      execute: ({ amount }) => amount,
    });
    const { runtime } = testRuntime([tool]);
    expect((await runtime.call({ name: 'spend', args: { amount: 5 }, sessionId: 's' })).status).toBe(
      'succeeded',
    );
    expect(
      (await runtime.call({ name: 'spend', args: { amount: 500 }, sessionId: 's' })).output,
    ).toMatchObject({
      status: 'awaiting_approval',
    });
  });

  it('fails a call whose needsApproval or prepare throws, before it runs, and keeps its arguments', async () => {
    let runs = 0;
    const throwing = (name: string, hooks: { prepare?: () => never; needsApproval?: () => never }) =>
      defineTool({
        name,
        description: name,
        input: z.object({ amount: z.number() }),
        ...(hooks.prepare ? { prepare: hooks.prepare } : {}),
        execution: hooks.needsApproval ? { needsApproval: hooks.needsApproval } : {},
        execute: () => ++runs,
      });
    const refusing = () => {
      throw new ToolError('the approver is away');
    };
    const store = memoryStore();
    const { runtime } = testRuntime(
      [throwing('ask', { needsApproval: refusing }), throwing('prep', { prepare: refusing })],
      { store },
    );
    for (const name of ['ask', 'prep']) {
      const reply = await runtime.call({ name, args: { amount: 7 }, sessionId: 's' });
      expect(reply.status).toBe('failed');
      expect(reply.error).toEqual({ code: 'tool_error', message: 'the approver is away' });
      expect(await store.getCall(reply.callId)).toMatchObject({ status: 'failed', args: { amount: 7 } });
    }
    expect(runs).toBe(0);
  });
});
