import { defineTool, type RuntimeFailure, ToolError } from '@baton/contracts';
import { memoryStore } from '@baton/store';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createRuntime, type Logger } from '../src/index.js';
import { SimulatedClock } from '../src/testing.js';
import { gatedTool, settle } from './helpers.js';

function recordingLogger() {
  const lines: Array<{ level: string; fields: Record<string, unknown>; message: string | undefined }> = [];
  const at =
    (level: string) =>
    (fields: object, message?: string): void => {
      lines.push({ level, fields: fields as Record<string, unknown>, message });
    };
  const logger: Logger = { error: at('error'), warn: at('warn'), info: at('info'), debug: at('debug') };
  return { logger, lines };
}

describe('failures the runtime handles', () => {
  it('logs a heartbeat that cannot reach the store, publishes it on failures$, and beats again at the next turn', async () => {
    const store = memoryStore();
    const { logger, lines } = recordingLogger();
    const clock = new SimulatedClock();
    const runtime = createRuntime({ store, clock, logger, leaseMs: 3_000 });
    const failures: RuntimeFailure[] = [];
    runtime.failures$.subscribe((failure) => failures.push(failure));
    await runtime.ready;
    const down = new Error('connection refused');
    let beats = 0;
    const heartbeat = store.heartbeat.bind(store);
    store.heartbeat = async (id, now) => {
      beats++;
      if (beats === 1) throw down;
      return heartbeat(id, now);
    };
    clock.increment(1_000);
    await settle();
    expect(failures).toEqual([
      { op: 'heartbeat', error: expect.objectContaining({ message: 'connection refused' }), at: 1_000 },
    ]);
    expect(lines).toEqual([
      {
        level: 'error',
        fields: { op: 'heartbeat', err: failures[0]?.error },
        message: 'baton: heartbeat failed',
      },
    ]);
    clock.increment(1_000);
    await settle();
    expect(beats).toBe(2);
    expect(failures).toHaveLength(1);
    await runtime.close();
  });

  it("reports a call's refused write with its call id, and ends that call persistence_failed", async () => {
    const store = memoryStore();
    const { logger, lines } = recordingLogger();
    const { tool, runs } = gatedTool('work', { mode: 'auto' });
    const runtime = createRuntime({ tools: [tool], store, clock: new SimulatedClock(), logger });
    const failures: RuntimeFailure[] = [];
    runtime.failures$.subscribe((failure) => failures.push(failure));
    await runtime.ready;
    const pending = runtime.call({ name: 'work', sessionId: 's', callId: 'c1' });
    await settle();
    const write = store.write.bind(store);
    store.write = async (batch) => {
      if (batch.calls?.some((call) => call.callId === 'c1')) throw new Error('disk full');
      return write(batch);
    };
    runs[0]?.resolve('done');
    expect(await pending).toMatchObject({ status: 'failed', error: { code: 'persistence_failed' } });
    expect(failures.map((failure) => [failure.op, failure.callId])).toContainEqual(['write', 'c1']);
    expect(lines.some((line) => line.fields.callId === 'c1' && line.fields.op === 'write')).toBe(true);
    store.write = write;
    await runtime.close();
  });

  it('is quiet by default: no logger, nothing printed, and failures$ still tells', async () => {
    const store = memoryStore();
    const clock = new SimulatedClock();
    const runtime = createRuntime({ store, clock, leaseMs: 3_000 });
    const failures: RuntimeFailure[] = [];
    runtime.failures$.subscribe((failure) => failures.push(failure));
    await runtime.ready;
    store.heartbeat = async () => {
      throw new Error('down');
    };
    clock.increment(1_000);
    await settle();
    expect(failures.map((failure) => failure.op)).toEqual(['heartbeat']);
    await runtime.close();
  });
});

describe("a tool's failures, told to the operator", () => {
  it('logs a thrown error at error with the tool, the call, its message and stack; an error meant for the model at info', async () => {
    const { logger, lines } = recordingLogger();
    const broken = defineTool({
      name: 'broken',
      description: 'Throws',
      input: z.object({}),
      execute: () => {
        throw new TypeError('cannot read properties of undefined');
      },
    });
    const picky = defineTool({
      name: 'picky',
      description: 'Refuses',
      input: z.object({}),
      execute: () => {
        throw new ToolError('no such city');
      },
    });
    const runtime = createRuntime({ tools: [broken, picky], logger });
    const thrown = await runtime.call({ name: 'broken', args: {}, sessionId: 's', callId: 'b1' });
    // The model sees nothing of it.
    expect(thrown.error).toEqual({
      code: 'internal_error',
      message: expect.not.stringContaining('undefined'),
    });
    const answered = await runtime.call({ name: 'picky', args: {}, sessionId: 's', callId: 'p1' });
    expect(answered.error?.code).toBe('tool_error');

    const told = lines.filter((line) => line.fields.tool !== undefined);
    expect(told).toEqual([
      {
        level: 'error',
        fields: {
          tool: 'broken',
          callId: 'b1',
          attempt: 1,
          err: {
            type: 'TypeError',
            message: 'cannot read properties of undefined',
            stack: expect.stringMatching(/^TypeError: cannot read properties of undefined\n\s+at /),
          },
        },
        message: 'baton: tool broken failed: cannot read properties of undefined',
      },
      {
        level: 'info',
        fields: { tool: 'picky', callId: 'p1', attempt: 1, code: 'tool_error', message: 'no such city' },
        message: 'baton: tool picky answered tool_error: no such city',
      },
    ]);
    await runtime.close();
  });
});
