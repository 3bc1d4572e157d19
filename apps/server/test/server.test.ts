import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { CallEvent } from '@baton/contracts';
import { type ServerProcess, startServer } from '@baton/test-support';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readSse, type SseMessage } from './sse-client.js';

const dir = mkdtempSync(join(tmpdir(), 'baton-server-'));
let server: ServerProcess;

beforeAll(async () => {
  // A short budget: the slow tool's first progress comes a second after the call is backgrounded.
  server = await startServer({ env: { BATON_INLINE_BUDGET_MS: '50' }, dir });
});

afterAll(async () => {
  expect(await server.stop()).toBe(0);
  rmSync(dir, { recursive: true, force: true });
});

const json = (method: string, body?: object): RequestInit => ({
  method,
  headers: { 'content-type': 'application/json' },
  ...(body ? { body: JSON.stringify(body) } : {}),
});

async function api<T = Record<string, unknown>>(path: string, init?: RequestInit): Promise<T> {
  const response = await fetch(`${server.address}${path}`, init);
  expect(response.status).toBe(200);
  return (await response.json()) as T;
}

/** Reads a stream until `done` says stop; the connection is then dropped, as a client that goes away. */
async function readUntil(
  path: string,
  done: (message: SseMessage<CallEvent>) => boolean,
  lastEventId?: string,
): Promise<Array<SseMessage<CallEvent>>> {
  const abort = new AbortController();
  const response = await fetch(`${server.address}${path}`, {
    signal: abort.signal,
    headers: lastEventId === undefined ? {} : { 'last-event-id': lastEventId },
  });
  expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/);
  const messages: Array<SseMessage<CallEvent>> = [];
  for await (const message of readSse<CallEvent>(response)) {
    messages.push(message);
    if (done(message)) break;
  }
  abort.abort();
  return messages;
}

describe('the real server, driven over HTTP', () => {
  it('runs a fast call inline, and gives the same call for the same callId', async () => {
    const first = await api(
      '/v1/calls',
      json('POST', { name: 'echo', args: { text: 'hi' }, sessionId: 'fast', callId: 'e1' }),
    );
    expect(first).toEqual({ callId: 'e1', status: 'succeeded', output: { text: 'hi' } });
    const again = await api(
      '/v1/calls',
      json('POST', { name: 'echo', args: { text: 'other' }, sessionId: 'fast', callId: 'e1' }),
    );
    expect(again).toEqual(first);
    expect(await api('/v1/calls?sessionId=fast')).toMatchObject({
      calls: [{ callId: 'e1', status: 'succeeded' }],
    });
  });

  it('backgrounds a slow call, streams its session, resumes the stream after a disconnect without a lost or repeated event, and notifies', async () => {
    const reply = await api(
      '/v1/calls',
      json('POST', { name: 'slow_report', args: { seconds: 2 }, sessionId: 'slow' }),
    );
    expect(reply).toMatchObject({ status: 'backgrounded' });
    const callId = reply.callId as string;

    const before = await readUntil('/v1/sessions/slow/events', ({ data }) => data.type === 'progress');
    const after = await readUntil(
      '/v1/sessions/slow/events',
      ({ data }) => data.type === 'notification',
      before.at(-1)?.id,
    );
    const whole = await readUntil('/v1/sessions/slow/events', ({ data }) => data.type === 'notification');
    expect([...before, ...after]).toEqual(whole);
    expect(whole.map(({ data }) => data.type)).toEqual([
      'queued',
      'started',
      'backgrounded',
      'progress',
      'progress',
      'succeeded',
      'notification',
    ]);
    expect(new Set(whole.map(({ id }) => id)).size).toBe(whole.length);

    // The call's own stream numbers its events by seq, resumes the same way, names each event by
    // its type, and ends with the call's last event: for a call answered `backgrounded`, the
    // notification after its end.
    const callStream = await readUntil(`/v1/calls/${callId}/events?after=3`, () => false);
    expect(callStream.map(({ id, event }) => `${id}:${event}`)).toEqual([
      '4:progress',
      '5:progress',
      '6:succeeded',
      '7:notification',
    ]);
    // Asked again from after its end (as EventSource reconnects), it says there is no more: 204.
    const again = await fetch(`${server.address}/v1/calls/${callId}/events`, {
      headers: { 'last-event-id': '7' },
    });
    expect(again.status).toBe(204);
    expect((await fetch(`${server.address}/v1/calls/${callId}/events?after=6`)).status).toBe(200);

    const notifications = await api<Array<{ id: string; callId: string; body: string }>>(
      '/v1/notifications?sessionId=slow',
    );
    expect(notifications).toMatchObject([{ callId }]);
    expect(await api(`/v1/notifications/${notifications[0]?.id}/ack`, json('POST'))).toEqual({
      acknowledged: true,
    });
    expect(await api('/v1/notifications?sessionId=slow&status=queued')).toEqual([]);
  });

  it('cancels a running call', async () => {
    const reply = await api(
      '/v1/calls',
      json('POST', { name: 'slow_report', args: { seconds: 30 }, sessionId: 'c' }),
    );
    expect(await api(`/v1/calls/${reply.callId}/cancel`, json('POST'))).toEqual({ cancelled: true });
    expect(await api(`/v1/calls/${reply.callId}`)).toMatchObject({ status: 'cancelled' });
  });

  it('runs a call that needs approval once approved', async () => {
    const reply = await api(
      '/v1/calls',
      json('POST', { name: 'deploy', args: { env: 'staging' }, sessionId: 'a' }),
    );
    expect(reply).toMatchObject({ status: 'backgrounded', output: { status: 'awaiting_approval' } });
    const stream = readUntil(`/v1/calls/${reply.callId}/events`, ({ data }) => data.type === 'succeeded');
    expect(await api(`/v1/calls/${reply.callId}/approve`, json('POST'))).toEqual({ approved: true });
    await stream;
    expect(await api(`/v1/calls/${reply.callId}`)).toMatchObject({
      status: 'succeeded',
      result: { deployed: 'staging' },
    });
  });

  it('serves its OpenAPI document and Prometheus metrics', async () => {
    const openapi = await api<{ paths: Record<string, object> }>('/openapi.json');
    expect(Object.keys(openapi.paths)).toContain('/v1/calls/{id}/events');
    const metrics = await (await fetch(`${server.address}/metrics`)).text();
    expect(metrics).toMatch(/^baton_calls_ended_total\{status="succeeded",tool="echo"\} 1$/m);
    expect(metrics).toMatch(/^baton_calls\{state="queued"\} 0$/m);
    expect(metrics).toMatch(/^baton_queue_depth 0$/m);
    // Nothing waits for a worker in the store: a runtime of role both owns every call it takes.
    expect(metrics).toMatch(/^baton_store_queue_depth 0$/m);
    expect(metrics).toMatch(/^baton_store_oldest_queued_seconds 0$/m);
    expect(metrics).toMatch(
      /^baton_call_duration_seconds_count\{status="succeeded",tool="slow_report"\} 1$/m,
    );
  });
});
