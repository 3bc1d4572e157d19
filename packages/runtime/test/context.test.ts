import { defineTool } from '@baton/contracts';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { OUTPUT_TAIL_CHARS } from '../src/index.js';
import { deferred } from '../src/testing.js';
import { reportingTool, settle, testRuntime, typesOf } from './helpers.js';

describe('what a tool reports through its context', () => {
  it('gives the tool its call id, session, name and attempt', async () => {
    const seen = deferred<object>();
    const probe = defineTool({
      name: 'probe',
      description: 'p',
      input: z.object({}),
      execute: (_, ctx) => {
        seen.resolve({
          callId: ctx.callId,
          sessionId: ctx.sessionId,
          toolName: ctx.toolName,
          attempt: ctx.attempt,
        });
        return null;
      },
    });
    const { runtime } = testRuntime([probe]);
    await runtime.call({ name: 'probe', sessionId: 's9', callId: 'c9' });
    expect(await seen.promise).toEqual({ callId: 'c9', sessionId: 's9', toolName: 'probe', attempt: 1 });
  });

  it('turns progress, status and log into bus events and keeps the latest on the record, with a 2048-character tail of [stream]-prefixed output', async () => {
    const { tool: worker, step } = reportingTool((ctx) => {
      ctx.progress({ current: 1, total: 3, unit: 'page', label: 'fetching' });
      ctx.status('reading page 1');
      ctx.log('stdout', 'a'.repeat(3000));
      ctx.log('stderr', 'END');
    });
    const { runtime, events } = testRuntime([worker]);
    const reply = await runtime.call({ name: 'worker', sessionId: 's' });
    const record = await runtime.get(reply.callId);
    expect(record).toMatchObject({
      status: 'backgrounded',
      progress: { current: 1, total: 3, unit: 'page', label: 'fetching' },
      statusText: 'reading page 1',
    });
    expect(record?.outputTail).toHaveLength(OUTPUT_TAIL_CHARS);
    expect(record?.outputTail.endsWith('aaa[stderr] END')).toBe(true);
    expect(typesOf(events, reply.callId)).toEqual([
      'queued',
      'backgrounded',
      'started',
      'progress',
      'status',
      'log',
      'log',
    ]);
    const seqs = events.filter((event) => event.callId === reply.callId).map((event) => event.seq);
    expect(seqs).toEqual([1, 2, 3, 4, 5, 6, 7]);
    step.resolve();
    await settle();
    expect(await runtime.get(reply.callId)).toMatchObject({
      status: 'succeeded',
      statusText: 'reading page 1',
    });
  });

  it('ignores reports made after the call ended', async () => {
    let late: (() => void) | undefined;
    const leaky = defineTool({
      name: 'leaky',
      description: 'l',
      input: z.object({}),
      execute: (_, ctx) => {
        late = () => ctx.status('after the end');
        return 'done';
      },
    });
    const { runtime, events } = testRuntime([leaky]);
    const reply = await runtime.call({ name: 'leaky', sessionId: 's' });
    late?.();
    await settle();
    expect(typesOf(events, reply.callId)).toEqual(['queued', 'started', 'succeeded']);
    expect((await runtime.get(reply.callId))?.statusText).toBeUndefined();
  });
});
