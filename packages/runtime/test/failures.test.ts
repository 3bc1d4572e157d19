import type { RuntimeFailure } from '@baton/contracts';
import { memoryStore } from '@baton/store';
import { describe, expect, it } from 'vitest';
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
