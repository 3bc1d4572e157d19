import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { defineTool } from '@baton/contracts';
import { createRuntime, type Runtime } from '@baton/runtime';
import { deferred, promoteWhenStarted, SimulatedClock } from '@baton/runtime/testing';
import { sqliteStore } from '@baton/store-sqlite';
import { VOICE_BUDGET_MS, voiceRuntime } from '@baton/test-support';
import { OpenAIRealtimeWebSocket, RealtimeAgent, RealtimeSession } from '@openai/agents-realtime';
import { filter, firstValueFrom } from 'rxjs';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { batonRealtimeResults, batonRealtimeTools } from '../src/index.js';
import { type ClientEvent, fakeRealtimeServer, messagesOf, outputsOf } from './fake-realtime-server.js';

const BUDGET_MS = VOICE_BUDGET_MS;
const SESSION = 'voice-1';

/** The call goes to the background as soon as it has started. */
const promoteAtStart = (runtime: Runtime, clock: SimulatedClock, callId: string) =>
  promoteWhenStarted(runtime, clock, callId, BUDGET_MS);

const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A voice agent with the runtime's tools, in a session on the fake endpoint. */
async function connectSession(runtime: Runtime, server: { url: string }): Promise<RealtimeSession> {
  const agent = new RealtimeAgent({
    name: 'voice',
    instructions: 'Answer by voice.',
    tools: batonRealtimeTools(runtime, { sessionId: SESSION }),
  });
  const session = new RealtimeSession(agent, {
    transport: new OpenAIRealtimeWebSocket({ url: server.url }),
    model: 'gpt-realtime',
  });
  await session.connect({ apiKey: 'test-key' });
  cleanups.push(() => session.close());
  return session;
}

async function setUp() {
  const { runtime, clock, gateOf } = voiceRuntime();
  cleanups.push(() => runtime.close());
  const server = await fakeRealtimeServer();
  cleanups.push(() => server.close());
  const session = await connectSession(runtime, server);
  const results = batonRealtimeResults(runtime, { sessionId: SESSION });
  cleanups.push(() => results.close());
  await results.attach(session);
  /** A new session on the same endpoint (the conversation taken up again). */
  const reconnect = () => connectSession(runtime, server);
  return { runtime, clock, server, session, results, reconnect, gateOf };
}

/** The model starts a response, and the session has heard it start. */
async function speaking(
  session: RealtimeSession,
  server: Awaited<ReturnType<typeof fakeRealtimeServer>>,
  id: string,
) {
  const heard = new Promise((resolve) => session.transport.once('turn_started', resolve));
  server.startResponse(id);
  await heard;
}

/** The response the SDK asked for after the call's output has come and gone. */
const answeredAfter = (callId: string) => (events: ClientEvent[]) => {
  const output = events.findIndex((event) => outputTo(callId)([event]) !== undefined);
  return output !== -1 && events.slice(output).some((event) => event.type === 'response.create')
    ? true
    : undefined;
};

const outputTo = (callId: string) => (events: ClientEvent[]) =>
  outputsOf(events).find((output) => output.callId === callId);

/**
 * The model calls `name` in a response of its own, which then ends; the call passes its budget
 * as it starts, and its acknowledgement is answered (the SDK asked for a response after it).
 */
async function callInBackground(
  runtime: Runtime,
  clock: SimulatedClock,
  server: Awaited<ReturnType<typeof fakeRealtimeServer>>,
  call: { callId: string; name: string; topic: string },
) {
  const { callId, name, topic } = call;
  const promoted = promoteAtStart(runtime, clock, callId);
  server.startResponse(`resp_${callId}`);
  server.callFunction(`resp_${callId}`, callId, name, { topic });
  server.endResponse(`resp_${callId}`);
  await promoted;
  await server.until(answeredAfter(callId));
}

describe('Baton in an OpenAI Realtime session', () => {
  it("answers a fast call with its result, and a failure with the tool's message", async () => {
    const { server } = await setUp();
    server.startResponse('resp_a');
    server.callFunction('resp_a', 'call_1', 'look_up', { word: 'hello' });
    server.callFunction('resp_a', 'call_2', 'look_up', { word: 'nothing' });
    server.endResponse('resp_a');
    expect(JSON.parse((await server.until(outputTo('call_1'))).output)).toEqual({
      word: 'hello',
      meaning: 'a greeting',
    });
    expect((await server.until(outputTo('call_2'))).output).toBe('No entry for "nothing".');
  });

  it('acknowledges a slow call at the budget, and has the model say its result when its turn ends (when_idle)', async () => {
    const { runtime, clock, server, session, gateOf } = await setUp();
    const promoted = promoteAtStart(runtime, clock, 'call_idle');
    server.startResponse('resp_b');
    server.callFunction('resp_b', 'call_idle', 'research_when_idle', { topic: 'tides' });
    server.endResponse('resp_b');
    await promoted;
    expect((await server.until(outputTo('call_idle'))).output).toContain('background');
    await server.until(answeredAfter('call_idle'));
    // The model is speaking when the result comes: it waits for the end of the turn.
    await speaking(session, server, 'resp_c');
    const noticed = firstValueFrom(runtime.events$.pipe(filter((event) => event.type === 'notification')));
    gateOf('tides').resolve('high at noon');
    await noticed;
    const before = server.received.length;
    await new Promise((resolve) => setImmediate(resolve));
    expect(messagesOf(server.received)).toEqual([]);
    server.endResponse('resp_c');
    const [text] = await server.until((events) =>
      messagesOf(events).length > 0 ? messagesOf(events) : undefined,
    );
    expect(text).toContain('tides: high at noon');
    const after = server.received.slice(before).map((event) => event.type);
    expect(after.slice(-2)).toEqual(['conversation.item.create', 'response.create']);
  });

  it('interrupts the model for an interrupt result, and adds a silent one without a response', async () => {
    const { runtime, clock, server, session, gateOf } = await setUp();
    for (const [callId, name, topic] of [
      ['call_now', 'research_interrupt', 'storms'],
      ['call_quiet', 'research_silent', 'moons'],
    ] as const) {
      const promoted = promoteAtStart(runtime, clock, callId);
      server.startResponse(`resp_${callId}`);
      server.callFunction(`resp_${callId}`, callId, name, { topic });
      server.endResponse(`resp_${callId}`);
      await promoted;
      await server.until(outputTo(callId));
      await server.until(answeredAfter(callId));
    }
    await speaking(session, server, 'resp_speaking');
    const creates = () => server.received.filter((event) => event.type === 'response.create').length;
    const createsBefore = creates();
    gateOf('moons').resolve('four');
    await server.until((events) =>
      messagesOf(events).some((text) => text.includes('moons: four')) ? true : undefined,
    );
    expect(creates()).toBe(createsBefore);
    gateOf('storms').resolve('none today');
    await server.until((events) =>
      messagesOf(events).some((text) => text.includes('storms: none today')) ? true : undefined,
    );
    await server.until((events) =>
      events.filter((event) => event.type === 'response.create').length > createsBefore ? true : undefined,
    );
    // The response the model was giving was cancelled before the result was put in.
    const cancelled = server.received.findIndex((event) => event.type === 'response.cancel');
    const storms = server.received.findIndex((event) =>
      messagesOf([event]).some((text) => text.includes('storms')),
    );
    expect(cancelled).toBeGreaterThan(-1);
    expect(cancelled).toBeLessThan(storms);
    // Each given once.
    expect(await runtime.notifications.list({ sessionId: SESSION, status: 'queued' })).toEqual([]);
  });

  it('keeps a result that ends while no session is attached, and gives it once to the next session', async () => {
    const { runtime, clock, server, session, results, reconnect, gateOf } = await setUp();
    await callInBackground(runtime, clock, server, {
      callId: 'call_away',
      name: 'research_when_idle',
      topic: 'comets',
    });
    // The connection drops: the bridge lets go of the session.
    results.detach();
    session.close();
    const noticed = firstValueFrom(runtime.events$.pipe(filter((event) => event.type === 'notification')));
    gateOf('comets').resolve('one a year');
    await noticed;
    expect(messagesOf(server.received)).toEqual([]);
    expect(await runtime.notifications.list({ sessionId: SESSION, status: 'queued' })).toHaveLength(1);

    const next = await reconnect();
    await results.attach(next);
    const [text] = await server.until((events) =>
      messagesOf(events).length > 0 ? messagesOf(events) : undefined,
    );
    expect(text).toContain('comets: one a year');
    // Attached once more, it gives nothing again.
    await results.attach(next);
    expect(messagesOf(server.received)).toHaveLength(1);
    expect(await runtime.notifications.list({ sessionId: SESSION, status: 'queued' })).toEqual([]);
  });

  it('gives the next session the result of a call that a restart of the runtime took up (SQLite)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'baton-realtime-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const path = join(dir, 'baton.db');
    const runs: Array<ReturnType<typeof deferred<string>>> = [];
    const research = defineTool({
      name: 'research',
      description: 'Researches a topic; takes minutes',
      input: z.object({ topic: z.string() }),
      execution: { mode: 'auto', idempotent: true },
      async execute({ topic }) {
        const run = deferred<string>();
        runs.push(run);
        return `${topic}: ${await run.promise}`;
      },
    });
    const server = await fakeRealtimeServer();
    cleanups.push(() => server.close());
    const open = async (runtime: Runtime) => {
      const session = await connectSession(runtime, server);
      const results = batonRealtimeResults(runtime, { sessionId: SESSION });
      await results.attach(session);
      return { session, results };
    };

    const clock = new SimulatedClock();
    const first = createRuntime({
      tools: [research],
      store: sqliteStore({ path }),
      clock,
      inlineBudgetMs: BUDGET_MS,
    });
    const before = await open(first);
    await callInBackground(first, clock, server, {
      callId: 'call_restart',
      name: 'research',
      topic: 'orbits',
    });
    // A deploy: the runtime stops while the call runs (it hands the call over); the session ends.
    await before.results.close();
    before.session.close();
    await first.close();

    const later = new SimulatedClock();
    later.set(clock.now() + 60_000);
    const second = createRuntime({ tools: [research], store: sqliteStore({ path }), clock: later });
    cleanups.push(() => second.close());
    await second.ready;
    const after = await open(second);
    cleanups.push(
      () => after.session.close(),
      () => after.results.close(),
    );
    await vi.waitFor(() => expect(runs).toHaveLength(2));
    runs[1]?.resolve('elliptical');
    const [text] = await server.until((events) =>
      messagesOf(events).length > 0 ? messagesOf(events) : undefined,
    );
    expect(text).toContain('orbits: elliptical');
    expect(await second.get('call_restart')).toMatchObject({ status: 'succeeded', attempt: 2 });
  });

  it('cancels the calls still within their budget when the user speaks over the model, and leaves those in the background', async () => {
    const { runtime, clock, server, gateOf } = await setUp();
    await callInBackground(runtime, clock, server, {
      callId: 'call_background',
      name: 'research_when_idle',
      topic: 'rivers',
    });

    const started = firstValueFrom(
      runtime.events$.pipe(filter((event) => event.type === 'started' && event.callId === 'call_inline')),
    );
    server.startResponse('resp_talk');
    server.speak('resp_talk');
    server.callFunction('resp_talk', 'call_inline', 'research_interrupt', { topic: 'lakes' });
    await started;
    const cancelled = firstValueFrom(runtime.events$.pipe(filter((event) => event.type === 'cancelled')));
    server.userSpeaks();
    expect(await cancelled).toMatchObject({
      callId: 'call_inline',
      reason: 'the user interrupted the response',
    });
    expect((await runtime.get('call_background'))?.status).toBe('backgrounded');
    gateOf('rivers').resolve('long');
    await server.until((events) =>
      messagesOf(events).some((text) => text.includes('rivers: long')) ? true : undefined,
    );
  });

  it('a result that interrupts the model cancels no other call: only the user speaking does', async () => {
    const { runtime, clock, server, session, gateOf } = await setUp();
    await callInBackground(runtime, clock, server, {
      callId: 'call_storm',
      name: 'research_interrupt',
      topic: 'storms',
    });

    // The model speaks, and a call it made is still within its budget.
    const started = firstValueFrom(
      runtime.events$.pipe(filter((event) => event.type === 'started' && event.callId === 'call_inline')),
    );
    await speaking(session, server, 'resp_talk');
    server.speak('resp_talk');
    server.callFunction('resp_talk', 'call_inline', 'research_when_idle', { topic: 'lakes' });
    await started;
    const interrupted = new Promise((resolve) =>
      session.transport.once('audio_interrupted', () => resolve(undefined)),
    );
    gateOf('storms').resolve('none today');
    await interrupted;
    await server.until((events) =>
      messagesOf(events).some((text) => text.includes('storms: none today')) ? true : undefined,
    );
    expect((await runtime.get('call_inline'))?.status).toBe('inline');
    gateOf('lakes').resolve('still');
    await server.until(outputTo('call_inline'));
    expect((await runtime.get('call_inline'))?.status).toBe('succeeded');
  });

  it('a result that ends while the socket is down is sent once to the next session, never lost', async () => {
    const { runtime, clock, server, session, results, reconnect, gateOf } = await setUp();
    await callInBackground(runtime, clock, server, {
      callId: 'call_down',
      name: 'research_when_idle',
      topic: 'tides',
    });
    // The network drops the socket; nobody tells the bridge.
    const down = new Promise((resolve) =>
      session.transport.on('connection_change', (status) => status === 'disconnected' && resolve(status)),
    );
    server.drop();
    await down;
    const noticed = firstValueFrom(runtime.events$.pipe(filter((event) => event.type === 'notification')));
    gateOf('tides').resolve('high at noon');
    await noticed;
    expect(await runtime.notifications.list({ sessionId: SESSION, status: 'queued' })).toHaveLength(1);

    const next = await reconnect();
    await results.attach(next);
    const [text] = await server.until((events) =>
      messagesOf(events).length > 0 ? messagesOf(events) : undefined,
    );
    expect(text).toContain('tides: high at noon');
    expect(messagesOf(server.received)).toHaveLength(1);
    expect(await runtime.notifications.list({ sessionId: SESSION, status: 'queued' })).toEqual([]);
  });
});
