import { defineTool } from '@baton/contracts';
import { createRuntime, type Runtime } from '@baton/runtime';
import { type Deferred, deferred, memoryStore, SimulatedClock } from '@baton/runtime/testing';
import { initializeLogger, voice } from '@livekit/agents';
import { filter, firstValueFrom } from 'rxjs';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { batonLiveKitResults, batonLiveKitTools } from '../src/index.js';
import { callTool, type ScriptedAnswer, ScriptedLlm, say } from './scripted-llm.js';

const BUDGET_MS = 300;
const SESSION = 'call-room-1';

beforeAll(() => {
  initializeLogger({ pretty: false, level: 'silent' });
});

const closing: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const close of closing.splice(0).reverse()) await close();
});

/** A voice session with no room: text in and out, as LiveKit's own tests run one. */
async function setUp(script: ScriptedAnswer[]) {
  const gates = new Map<string, Deferred<string>>();
  const gateOf = (topic: string) => {
    const gate = gates.get(topic) ?? deferred<string>();
    gates.set(topic, gate);
    return gate;
  };
  const research = (scheduling: 'interrupt' | 'when_idle' | 'silent') =>
    defineTool({
      name: `research_${scheduling}`,
      description: 'Researches a topic; takes minutes',
      input: z.object({ topic: z.string() }),
      execution: { mode: 'auto', scheduling },
      execute: ({ topic }) => gateOf(topic).promise,
    });
  const clock = new SimulatedClock();
  const runtime: Runtime = createRuntime({
    tools: [
      research('interrupt'),
      research('when_idle'),
      research('silent'),
      defineTool({
        name: 'look_up',
        description: 'Looks a word up',
        input: z.object({ word: z.string() }),
        execute: ({ word }) => `${word}: a word`,
      }),
    ],
    store: memoryStore(),
    clock,
    inlineBudgetMs: BUDGET_MS,
  });
  closing.push(() => runtime.close());
  const model = new ScriptedLlm(script);
  const agent = new voice.Agent({
    instructions: 'Help.',
    tools: batonLiveKitTools(runtime, { sessionId: SESSION }),
  });
  const session = new voice.AgentSession({ llm: model });
  await session.start({ agent });
  closing.push(() => session.close());
  const results = batonLiveKitResults(runtime, session, { sessionId: SESSION });
  closing.push(async () => results.close());
  /** A user turn, run to its end. */
  const turn = async (userInput: string) => (await session.run({ userInput }).wait()).events;
  const promoteWhenStarted = () =>
    firstValueFrom(runtime.events$.pipe(filter((event) => event.type === 'started'))).then(() =>
      clock.increment(BUDGET_MS),
    );
  const notified = () =>
    firstValueFrom(runtime.events$.pipe(filter((event) => event.type === 'notification')));
  /** What the agent said, in order. */
  const said = () =>
    session.history.items.flatMap((item) =>
      item.type === 'message' && item.role === 'assistant' ? [item.textContent ?? ''] : [],
    );
  return { runtime, model, session, gateOf, turn, promoteWhenStarted, notified, said };
}

describe('Baton tools in a LiveKit voice session', () => {
  it('answers a fast call inline, with its output as the tool output', async () => {
    const { runtime, model, turn, said } = await setUp([
      callTool('call-1', 'look_up', { word: 'tide' }),
      say('A tide is a word.'),
    ]);
    await turn('What is a tide?');
    expect(said()).toEqual(['A tide is a word.']);
    expect(model.requests[1]).toContain('tide: a word');
    expect(await runtime.get('call-1')).toMatchObject({ status: 'succeeded', sessionId: SESSION });
  });

  it('acknowledges a slow call so the agent keeps talking, and speaks its result when the conversation pauses', async () => {
    const { model, gateOf, turn, promoteWhenStarted, notified, said } = await setUp([
      callTool('call-1', 'research_when_idle', { topic: 'tides' }),
      say('I am looking it up.'),
      say('High tide is at noon.'),
    ]);
    const promoted = promoteWhenStarted();
    await turn('When is high tide?');
    await promoted;
    expect(said()).toEqual(['I am looking it up.']);
    expect(model.requests[1]).toContain('continuing in the background');
    const notice = notified();
    gateOf('tides').resolve('tides: high at noon');
    await notice;
    await expect.poll(() => said()).toEqual(['I am looking it up.', 'High tide is at noon.']);
    expect(model.requests[2]?.split('tides: high at noon').length).toBe(2);
  });

  it('adds a silent result to the chat context only: the agent says nothing of it until asked', async () => {
    const { model, gateOf, turn, promoteWhenStarted, notified, said, runtime } = await setUp([
      callTool('call-1', 'research_silent', { topic: 'tides' }),
      say('I am looking it up.'),
      say('High tide is at noon.'),
    ]);
    const promoted = promoteWhenStarted();
    await turn('When is high tide?');
    await promoted;
    const notice = notified();
    gateOf('tides').resolve('tides: high at noon');
    await notice;
    await expect
      .poll(async () => (await runtime.notifications.list({ sessionId: SESSION }))[0]?.status)
      .toBe('acknowledged');
    expect(said()).toEqual(['I am looking it up.']);
    expect(model.requests).toHaveLength(2);
    await turn('So?');
    expect(said()).toEqual(['I am looking it up.', 'High tide is at noon.']);
    expect(model.requests[2]?.split('tides: high at noon').length).toBe(2);
  });

  it('speaks the end of a call cancelled in the background', async () => {
    const { runtime, model, turn, promoteWhenStarted, notified, said } = await setUp([
      callTool('call-1', 'research_interrupt', { topic: 'tides' }),
      say('I am looking it up.'),
      say('The research was cancelled.'),
    ]);
    const promoted = promoteWhenStarted();
    await turn('When is high tide?');
    await promoted;
    const notice = notified();
    expect(await runtime.cancel('call-1', 'the user changed their mind')).toBe(true);
    await notice;
    await expect.poll(() => said()).toEqual(['I am looking it up.', 'The research was cancelled.']);
    expect(model.requests[2]).toContain('cancel');
  });
});
