import { defineTool, ToolError } from '@baton/contracts';
import { createRuntime, type Runtime } from '@baton/runtime';
import { postgresStore } from '@baton/store-postgres';
import { type ThrowawayPostgres, throwawayPostgres } from '@baton/store-postgres/testing';
import { type Span, SpanStatusCode, trace } from '@opentelemetry/api';
import { InMemorySpanExporter, type ReadableSpan, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';

// One call's span tree, from the agent's span in a client runtime to the tool's own spans in a
// worker runtime, with nothing between them but PostgreSQL: the trace travels in the call's record.

const exporter = new InMemorySpanExporter();
const provider = new NodeTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
provider.register();
const tracer = trace.getTracer('agent');

let attempts = 0;
const tools = [
  defineTool({
    name: 'forecast',
    description: 'A forecast: its service is busy the first time',
    input: z.object({ city: z.string() }),
    execution: { retry: { maxAttempts: 2, initialIntervalMs: 5 } },
    execute: ({ city }) =>
      tracer.startActiveSpan('GET /forecast', (span: Span) => {
        span.end();
        attempts++;
        if (attempts === 1) throw new ToolError('the forecast service is busy', { retryable: true });
        return { city, sky: 'clear' };
      }),
  }),
  defineTool({
    name: 'broken',
    description: 'Always fails',
    input: z.object({}),
    execute: () => {
      throw new ToolError('no such city');
    },
  }),
];

let server: ThrowawayPostgres;
let schemas = 0;
beforeAll(async () => {
  server = await throwawayPostgres();
}, 60_000);
afterAll(async () => {
  await provider.shutdown();
  await server.stop();
});

let client: Runtime;
let worker: Runtime;
beforeEach(async () => {
  const schema = `tracing_${++schemas}`;
  const store = () => postgresStore({ connectionString: server.url, schema, maxConnections: 4 });
  worker = createRuntime({ tools, store: store(), role: 'worker', pollMs: 100 });
  await worker.ready;
  client = createRuntime({ tools, store: store(), role: 'client', pollMs: 100 });
  await client.ready;
  exporter.reset();
  attempts = 0;
});
afterEach(async () => {
  await client.close();
  await worker.close();
});

const named = (name: string) => exporter.getFinishedSpans().filter((span) => span.name === name);
const parentOf = (span: ReadableSpan) => span.parentSpanContext?.spanId;

describe('OpenTelemetry', () => {
  it("continues the client's trace in the worker: agent span, execute_tool, the tool's own spans", async () => {
    const reply = await tracer.startActiveSpan('invoke_agent weather', async (root) => {
      const answered = await client.call({ name: 'forecast', args: { city: 'Oslo' }, sessionId: 's1' });
      root.end();
      return answered;
    });
    expect(reply).toMatchObject({ status: 'succeeded', output: { city: 'Oslo', sky: 'clear' } });

    // The worker ran it: the client only stored it, with the agent's trace.
    const record = await client.get(reply.callId);
    expect(record?.ownerId).toBe(worker.instanceId);
    const [root] = named('invoke_agent weather');
    expect(record?.trace?.traceparent).toContain(root?.spanContext().traceId);

    await expect.poll(() => named('execute_tool forecast').length).toBe(1);
    const [call] = named('execute_tool forecast');
    expect(call?.spanContext().traceId).toBe(root?.spanContext().traceId);
    expect(parentOf(call as ReadableSpan)).toBe(root?.spanContext().spanId);
    expect(call?.attributes).toMatchObject({
      'gen_ai.operation.name': 'execute_tool',
      'gen_ai.tool.name': 'forecast',
      'gen_ai.tool.call.id': reply.callId,
      'gen_ai.tool.type': 'function',
      'baton.call.status': 'succeeded',
      'baton.call.attempts': 2,
    });
    expect(call?.status.code).not.toBe(SpanStatusCode.ERROR);
    expect(call?.events.map((event) => [event.name, event.attributes?.['baton.call.attempt']])).toEqual([
      ['baton.call.started', 1],
      ['baton.call.retrying', 2],
      ['baton.call.started', 2],
    ]);

    // Each attempt's own span nests in the call's.
    const own = named('GET /forecast');
    expect(own).toHaveLength(2);
    for (const span of own) {
      expect(span.spanContext().traceId).toBe(root?.spanContext().traceId);
      expect(parentOf(span)).toBe(call?.spanContext().spanId);
    }
  });

  it('marks a failed call as an error, with its code', async () => {
    const reply = await client.call({ name: 'broken', args: {}, sessionId: 's1' });
    expect(reply.status).toBe('failed');
    await expect.poll(() => named('execute_tool broken').length).toBe(1);
    const [call] = named('execute_tool broken');
    expect(call?.status).toEqual({ code: SpanStatusCode.ERROR, message: 'no such city' });
    expect(call?.attributes['error.type']).toBe('tool_error');
    // Called with no span active: the call keeps no trace, and its span starts one.
    expect((await client.get(reply.callId))?.trace).toBeUndefined();
    expect(call?.parentSpanContext).toBeUndefined();
  });
});
