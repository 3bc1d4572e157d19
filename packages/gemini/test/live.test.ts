import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { defineTool } from '@baton/contracts';
import { createRuntime, type Runtime } from '@baton/runtime';
import { deferred, promoteWhenStarted, SimulatedClock } from '@baton/runtime/testing';
import { sqliteStore } from '@baton/store-sqlite';
import { VOICE_BUDGET_MS, voiceRuntime } from '@baton/test-support';
import { type FunctionResponse, GoogleGenAI, type Session } from '@google/genai';
import { filter, firstValueFrom } from 'rxjs';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { type BatonLive, batonLive } from '../src/index.js';
import { fakeLiveServer } from './fake-live-server.js';

const BUDGET_MS = VOICE_BUDGET_MS;
const SESSION = 'voice-1';

/** The call goes to the background as soon as it has started. */
const promoteAtStart = (runtime: Runtime, clock: SimulatedClock, callId: string) =>
  promoteWhenStarted(runtime, clock, callId, BUDGET_MS);

const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A runtime with a slow research tool per scheduling, and a fast look-up, on a simulated clock. */
async function setUp() {
  const { runtime, clock, gateOf } = voiceRuntime();
  cleanups.push(() => runtime.close());
  const server = await fakeLiveServer();
  cleanups.push(() => server.close());
  /** What the bridge could not send, as it tells its application. */
  const errors: unknown[] = [];
  const live = batonLive(runtime, { sessionId: SESSION, onError: (error) => errors.push(error) });
  cleanups.push(() => live.close());
  return { runtime, clock, server, live, gateOf, errors };
}

/** Connects the SDK's Live client to the fake server, the bridge taking its messages. */
async function connect(server: { url: string }, live: BatonLive, handle?: string): Promise<Session> {
  const ai = new GoogleGenAI({ apiKey: 'test-key', httpOptions: { baseUrl: server.url } });
  const session = await ai.live.connect({
    model: 'gemini-live-test',
    config: { tools: live.tools, sessionResumption: handle ? { handle } : {} },
    callbacks: { onmessage: (message) => void live.onmessage(message), onclose: () => live.detach() },
  });
  await live.attach(session);
  cleanups.push(() => session.close());
  return session;
}

/** The budget passes as soon as the call has started: it goes to the background. */
const responsesTo = (responses: FunctionResponse[], id: string) =>
  responses.filter((response) => response.id === id);

describe('Baton in a Gemini Live session', () => {
  it('declares the tools that may go to the background NON_BLOCKING, and answers a fast call inline', async () => {
    const { server, live } = await setUp();
    await connect(server, live);
    // As a 3.8 Live model reads them: a function that must block says so.
    expect(server.behaviorsOf(1)).toEqual([
      ['research_interrupt', 'NON_BLOCKING'],
      ['research_when_idle', 'NON_BLOCKING'],
      ['research_silent', 'NON_BLOCKING'],
      ['look_up', 'BLOCKING'],
    ]);
    server.send({
      toolCall: {
        functionCalls: [
          { id: 'fc-1', name: 'look_up', args: { word: 'hello' } },
          { id: 'fc-2', name: 'look_up', args: { word: 'nothing' } },
        ],
      },
    });
    await server.until(() => server.responses().length === 2);
    expect(server.responses()).toEqual([
      { id: 'fc-1', name: 'look_up', response: { output: { word: 'hello', meaning: 'a greeting' } } },
      { id: 'fc-2', name: 'look_up', response: { error: 'No entry for "nothing".' } },
    ]);
  });

  it.each([
    ['interrupt', 'INTERRUPT'],
    ['when_idle', 'WHEN_IDLE'],
    ['silent', 'SILENT'],
  ] as const)(
    'acknowledges a slow call at the budget, and sends its result once with the scheduling %s',
    async (scheduling, inLive) => {
      const { runtime, clock, server, live, gateOf } = await setUp();
      await connect(server, live);
      const promoted = promoteAtStart(runtime, clock, 'fc-slow');
      server.send({
        toolCall: {
          functionCalls: [{ id: 'fc-slow', name: `research_${scheduling}`, args: { topic: 'tides' } }],
        },
      });
      await promoted;
      const [acknowledgement] = await server.until(() => {
        const sent = responsesTo(server.responses(), 'fc-slow');
        return sent.length === 1 ? sent : undefined;
      });
      expect(acknowledgement).toMatchObject({ willContinue: true, scheduling: 'SILENT' });
      expect(JSON.stringify(acknowledgement?.response?.output)).toContain('background');

      gateOf('tides').resolve('high at noon');
      const sent = await server.until(() => {
        const all = responsesTo(server.responses(), 'fc-slow');
        return all.length === 2 ? all : undefined;
      });
      expect(sent[1]).toMatchObject({ id: 'fc-slow', name: `research_${scheduling}`, scheduling: inLive });
      expect(sent[1]?.willContinue).toBeUndefined();
      expect(JSON.stringify(sent[1]?.response)).toContain('tides: high at noon');
      // Given once: its notification is acknowledged.
      expect(await runtime.notifications.list({ sessionId: SESSION, status: 'queued' })).toEqual([]);
    },
  );

  it("declares NON_BLOCKING exactly what the runtime may background: by the runtime's defaultMode, or an approval to wait for", async () => {
    const clock = new SimulatedClock();
    const gate = deferred<string>();
    const tools = [
      defineTool({
        name: 'survey',
        description: 'Surveys a bay; names no mode',
        input: z.object({}),
        execute: () => gate.promise,
      }),
      defineTool({
        name: 'spell',
        description: 'Spells a word; always inline',
        input: z.object({ word: z.string() }),
        execution: { mode: 'inline' },
        execute: async ({ word }) => word.split('').join('-'),
      }),
      defineTool({
        name: 'transfer',
        description: 'Moves money; inline, but asks for approval first',
        input: z.object({}),
        execution: { mode: 'inline', needsApproval: true },
        execute: async () => 'moved',
      }),
    ];
    const runtime = createRuntime({ tools, clock, defaultMode: 'auto', inlineBudgetMs: BUDGET_MS });
    cleanups.push(() => runtime.close());
    const server = await fakeLiveServer();
    cleanups.push(() => server.close());
    const live = batonLive(runtime, { sessionId: SESSION });
    cleanups.push(() => live.close());
    await connect(server, live);
    expect(server.behaviorsOf(1)).toEqual([
      ['survey', 'NON_BLOCKING'],
      ['spell', 'BLOCKING'],
      ['transfer', 'NON_BLOCKING'],
    ]);
    const promoted = promoteAtStart(runtime, clock, 'fc-survey');
    server.send({ toolCall: { functionCalls: [{ id: 'fc-survey', name: 'survey', args: {} }] } });
    await promoted;
    const [acknowledgement] = await server.until(() => {
      const sent = responsesTo(server.responses(), 'fc-survey');
      return sent.length === 1 ? sent : undefined;
    });
    // willContinue only for a function declared NON_BLOCKING: the Live API honours it there alone.
    expect(acknowledgement).toMatchObject({ willContinue: true, scheduling: 'SILENT' });
    gate.resolve('the bay is calm');
    const sent = await server.until(() => {
      const all = responsesTo(server.responses(), 'fc-survey');
      return all.length === 2 ? all : undefined;
    });
    expect(sent[1]).toMatchObject({ id: 'fc-survey', scheduling: 'WHEN_IDLE' });
  });

  it('cancels the Baton call that the server cancels, and sends nothing more for it', async () => {
    const { runtime, clock, server, live } = await setUp();
    await connect(server, live);
    const promoted = promoteAtStart(runtime, clock, 'fc-cancel');
    server.send({
      toolCall: {
        functionCalls: [{ id: 'fc-cancel', name: 'research_interrupt', args: { topic: 'winds' } }],
      },
    });
    await promoted;
    await server.until(() => responsesTo(server.responses(), 'fc-cancel').length === 1 || undefined);
    const noticed = firstValueFrom(
      runtime.events$.pipe(filter((event) => event.type === 'notification' && event.callId === 'fc-cancel')),
    );
    server.send({ toolCallCancellation: { ids: ['fc-cancel'] } });
    await noticed;
    expect((await runtime.get('fc-cancel'))?.status).toBe('cancelled');
    // Its end was taken (acknowledged) by the bridge, and not sent.
    await vi.waitFor(async () =>
      expect(await runtime.notifications.list({ sessionId: SESSION, status: 'queued' })).toEqual([]),
    );
    // A look-up after it: the bridge is still answering, and sent nothing for the cancelled call.
    server.send({ toolCall: { functionCalls: [{ id: 'fc-after', name: 'look_up', args: { word: 'hi' } }] } });
    await server.until(() => responsesTo(server.responses(), 'fc-after').length === 1 || undefined);
    expect(responsesTo(server.responses(), 'fc-cancel')).toHaveLength(1);
  });

  it('sends no answer for a call the server cancels before it answered', async () => {
    const { runtime, server, live } = await setUp();
    await connect(server, live);
    const started = firstValueFrom(
      runtime.events$.pipe(filter((event) => event.type === 'started' && event.callId === 'fc-early')),
    );
    server.send({
      toolCall: { functionCalls: [{ id: 'fc-early', name: 'research_when_idle', args: { topic: 'tides' } }] },
    });
    await started;
    const cancelled = firstValueFrom(runtime.events$.pipe(filter((event) => event.type === 'cancelled')));
    server.send({ toolCallCancellation: { ids: ['fc-early'] } });
    expect(await cancelled).toMatchObject({ callId: 'fc-early' });
    server.send({ toolCall: { functionCalls: [{ id: 'fc-next', name: 'look_up', args: { word: 'hi' } }] } });
    await server.until(() => responsesTo(server.responses(), 'fc-next').length === 1 || undefined);
    expect(responsesTo(server.responses(), 'fc-early')).toEqual([]);
  });

  it('keeps a result whose send threw after it was taken, and sends it once with the next send', async () => {
    const { runtime, clock, server, live, gateOf, errors } = await setUp();
    const session = await connect(server, live);
    // The socket fails the next result's send (it closed under it, unseen): the send throws.
    let failing = 1;
    await live.attach({
      sendToolResponse: (params) => {
        const responses = [params.functionResponses ?? []].flat();
        const isResult = responses.some((response) => response.willContinue !== true);
        if (isResult && failing-- > 0) {
          throw new Error('WebSocket is not open');
        }
        session.sendToolResponse(params);
      },
    });
    for (const [id, topic] of [
      ['fc-first', 'tides'],
      ['fc-second', 'moons'],
    ] as const) {
      const promoted = promoteAtStart(runtime, clock, id);
      server.send({ toolCall: { functionCalls: [{ id, name: 'research_interrupt', args: { topic } }] } });
      await promoted;
      await server.until(() => responsesTo(server.responses(), id).length === 1 || undefined);
    }
    gateOf('tides').resolve('high at noon');
    await server.until(() => errors.length === 1 || undefined);
    expect(responsesTo(server.responses(), 'fc-first')).toHaveLength(1);
    expect(await runtime.notifications.list({ sessionId: SESSION, status: 'queued' })).toHaveLength(1);

    // The next result's send carries the one kept, first.
    gateOf('moons').resolve('four of them');
    await server.until(() => responsesTo(server.responses(), 'fc-second').length === 2 || undefined);
    expect(JSON.stringify(responsesTo(server.responses(), 'fc-first')[1]?.response)).toContain(
      'high at noon',
    );
    expect(await runtime.notifications.list({ sessionId: SESSION, status: 'queued' })).toEqual([]);
    // And never again, whatever attaches next.
    await live.attach(session);
    expect(responsesTo(server.responses(), 'fc-first')).toHaveLength(2);
  });

  it('keeps a result that ends while the socket is down, and sends it once into the resumed session', async () => {
    const { runtime, clock, server, live, gateOf } = await setUp();
    await connect(server, live);
    server.send({ sessionResumptionUpdate: { newHandle: 'resume-1', resumable: true } });
    const promoted = promoteAtStart(runtime, clock, 'fc-away');
    server.send({
      toolCall: { functionCalls: [{ id: 'fc-away', name: 'research_when_idle', args: { topic: 'moons' } }] },
    });
    await promoted;
    await server.until(() => responsesTo(server.responses(), 'fc-away').length === 1 || undefined);
    expect(live.resumptionHandle).toBe('resume-1');

    server.drop();
    await server.until(() => server.connections[0]?.socket.readyState === 3 || undefined);
    gateOf('moons').resolve('four of them');
    await firstValueFrom(runtime.events$.pipe(filter((event) => event.type === 'notification')));
    expect(responsesTo(server.responses(), 'fc-away')).toHaveLength(1);

    await connect(server, live, live.resumptionHandle);
    expect(server.setupOf(2)?.sessionResumption).toEqual({ handle: 'resume-1' });
    const sent = await server.until(() => {
      const all = responsesTo(server.responses(), 'fc-away');
      return all.length === 2 ? all : undefined;
    });
    expect(JSON.stringify(sent[1]?.response)).toContain('four of them');
    expect(server.connections[1]?.received.some((message) => message.toolResponse)).toBe(true);
    // A second attach (another reconnection) sends it no more.
    await connect(server, live, live.resumptionHandle);
    expect(responsesTo(server.responses(), 'fc-away')).toHaveLength(2);
  });

  it('delivers into the resumed session the result of a call that a restart of the runtime took up (SQLite)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'baton-gemini-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const path = join(dir, 'baton.db');
    const runs: Array<ReturnType<typeof deferred<string>>> = [];
    const research = defineTool({
      name: 'research',
      description: 'Researches a topic; takes minutes',
      input: z.object({ topic: z.string() }),
      execution: { mode: 'auto', scheduling: 'interrupt', idempotent: true },
      async execute({ topic }) {
        const run = deferred<string>();
        runs.push(run);
        return `${topic}: ${await run.promise}`;
      },
    });
    const server = await fakeLiveServer();
    cleanups.push(() => server.close());

    const clock = new SimulatedClock();
    const first = createRuntime({
      tools: [research],
      store: sqliteStore({ path }),
      clock,
      inlineBudgetMs: BUDGET_MS,
    });
    const firstLive = batonLive(first, { sessionId: SESSION });
    await connect(server, firstLive);
    const promoted = promoteAtStart(first, clock, 'fc-restart');
    server.send({
      toolCall: { functionCalls: [{ id: 'fc-restart', name: 'research', args: { topic: 'orbits' } }] },
    });
    await promoted;
    await server.until(() => responsesTo(server.responses(), 'fc-restart').length === 1 || undefined);
    // The runtime stops (a deploy) while the call runs: it hands the call over, and the socket drops.
    firstLive.close();
    server.drop();
    await first.close();

    const later = new SimulatedClock();
    later.set(clock.now() + 60_000);
    const second = createRuntime({
      tools: [research],
      store: sqliteStore({ path }),
      clock: later,
      inlineBudgetMs: BUDGET_MS,
    });
    cleanups.push(() => second.close());
    await second.ready;
    const secondLive = batonLive(second, { sessionId: SESSION });
    cleanups.push(() => secondLive.close());
    await connect(server, secondLive);
    await vi.waitFor(() => expect(runs).toHaveLength(2));
    runs[1]?.resolve('elliptical');
    const sent = await server.until(() => {
      const all = responsesTo(server.responses(), 'fc-restart');
      return all.length === 2 ? all : undefined;
    });
    expect(sent[1]).toMatchObject({ name: 'research', scheduling: 'INTERRUPT' });
    expect(JSON.stringify(sent[1]?.response)).toContain('orbits: elliptical');
    expect(await second.get('fc-restart')).toMatchObject({ status: 'succeeded', attempt: 2 });
  });
});
