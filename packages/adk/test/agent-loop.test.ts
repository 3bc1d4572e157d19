import { defineTool } from '@baton/contracts';
import { createRuntime, type Runtime } from '@baton/runtime';
import { memoryStore } from '@baton/runtime/testing';
import { agentLoopRuntime } from '@baton/test-support';
import { type Event, getFunctionCalls, InMemoryRunner, LlmAgent } from '@google/adk';
import { filter, firstValueFrom } from 'rxjs';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { batonAdkResults, batonAdkTools } from '../src/index.js';
import { callFunction, type ScriptedAnswer, ScriptedLlm, say } from './scripted-llm.js';

const BUDGET_MS = 300;
const USER = 'ada';
/** What the model is given of a call gone to the background, and of its end. */
const acknowledgement = (callId: string, tool: string) => ({
  call_id: callId,
  message: `This tool is taking longer than ${BUDGET_MS} ms, so it is continuing in the background. Continue the conversation; a later notification will report the result.`,
  status: 'running',
  tool,
});
const completed = (tool: string, result: unknown) => ({ status: 'completed', tool, result });

const opened: Runtime[] = [];
afterEach(async () => {
  await Promise.all(opened.splice(0).map((runtime) => runtime.close()));
});

/** The function responses the model was shown in one request, in order. */
const responsesIn = (contents: ScriptedLlm['requests'][number] | undefined) =>
  (contents ?? []).flatMap((content) => content.parts ?? []).flatMap((part) => part.functionResponse ?? []);

/** Everything the model was shown in one request, as text. */
const shown = (contents: ScriptedLlm['requests'][number] | undefined) => JSON.stringify(contents ?? []);

const textOf = (events: Event[]) =>
  events.flatMap((event) => event.content?.parts ?? []).flatMap((part) => part.text ?? []);

async function setUp(script: ScriptedAnswer[]) {
  const { runtime, clock, gateOf } = agentLoopRuntime((gates) => [
    defineTool({
      name: 'archive',
      description: 'Archives a topic, quietly; takes minutes',
      input: z.object({ topic: z.string() }),
      execution: { mode: 'auto', scheduling: 'silent' },
      execute: ({ topic }) => gates(`archive ${topic}`).promise,
    }),
  ]);
  opened.push(runtime);
  const model = new ScriptedLlm(script);
  const agent = new LlmAgent({
    name: 'assistant',
    model,
    instruction: 'Help.',
    tools: batonAdkTools(runtime),
  });
  const runner = new InMemoryRunner({ agent, appName: 'baton-adk-test' });
  const session = await runner.sessionService.createSession({ appName: runner.appName, userId: USER });
  const sessionId = session.id;
  const collect = async (events: AsyncIterable<Event>) => {
    const all: Event[] = [];
    for await (const event of events) all.push(event);
    return all;
  };
  /** A turn of the user's. */
  const turn = (text: string) =>
    collect(runner.runAsync({ userId: USER, sessionId, newMessage: { role: 'user', parts: [{ text }] } }));
  /** The session's results, brought back to the agent. */
  const results = (idle = true) =>
    collect(batonAdkResults(runtime, runner, { userId: USER, sessionId, idle }));
  /** The budget passes as soon as the tool runs: the call goes to the background. */
  const promoteWhenStarted = (toolName: string) =>
    firstValueFrom(
      runtime.events$.pipe(filter((event) => event.type === 'started' && event.toolName === toolName)),
    ).then(() => clock.increment(BUDGET_MS));
  /** The user's answer to ADK's request for confirmation, as ADK asks for it. */
  const answer = (confirmationId: string | undefined, confirmed: boolean) =>
    collect(
      runner.runAsync({
        userId: USER,
        sessionId,
        newMessage: {
          role: 'user',
          parts: [
            {
              functionResponse: {
                id: confirmationId ?? '',
                name: 'adk_request_confirmation',
                response: { confirmed },
              },
            },
          ],
        },
      }),
    );
  const notified = (callId: string) =>
    firstValueFrom(
      runtime.events$.pipe(filter((event) => event.type === 'notification' && event.callId === callId)),
    );
  return { runtime, model, runner, sessionId, gateOf, turn, results, answer, promoteWhenStarted, notified };
}

describe('Baton tools in an ADK agent', () => {
  it('answers a fast call inline, with its output as the function response', async () => {
    const { runtime, model, turn } = await setUp([
      callFunction('call-1', 'look_up', { word: 'tide' }),
      say('A tide is a word.'),
    ]);
    const events = await turn('What is a tide?');
    expect(textOf(events).at(-1)).toBe('A tide is a word.');
    expect(responsesIn(model.requests[1])).toEqual([
      { id: 'call-1', name: 'look_up', response: { output: 'tide: a word' } },
    ]);
    expect(await runtime.get('call-1')).toMatchObject({ status: 'succeeded', sessionId: expect.any(String) });
  });

  it('declares the tools that may go to the background as long-running, and only those', () => {
    const runtime = createRuntime({
      tools: [
        defineTool({
          name: 'slow',
          description: 's',
          input: z.object({}),
          execution: { mode: 'auto' },
          execute: () => 1,
        }),
        defineTool({ name: 'fast', description: 'f', input: z.object({}), execute: () => 1 }),
      ],
      store: memoryStore(),
    });
    opened.push(runtime);
    const tools = batonAdkTools(runtime);
    expect(tools.map((tool) => [tool.name, tool.isLongRunning])).toEqual([
      ['slow', true],
      ['fast', false],
    ]);
    expect(tools[0]?._getDeclaration()).toEqual({
      name: 'slow',
      description: 's',
      parametersJsonSchema: expect.objectContaining({ type: 'object' }),
    });
  });

  it('acknowledges a slow call at its budget, ends the turn, and brings its result back once as the same call', async () => {
    const { runtime, model, gateOf, turn, results, promoteWhenStarted, notified } = await setUp([
      callFunction('call-1', 'research', { topic: 'tides' }),
      say('It goes on in the background.'),
      say('The tides: high at noon.'),
      say('Nothing new.'),
    ]);
    const promoted = promoteWhenStarted('research');
    const first = await turn('Research the tides.');
    await promoted;
    expect(textOf(first).at(-1)).toBe('It goes on in the background.');
    expect(responsesIn(model.requests[1])).toEqual([
      { id: 'call-1', name: 'research', response: { output: acknowledgement('call-1', 'research') } },
    ]);
    expect(first.some((event) => event.longRunningToolIds?.includes('call-1'))).toBe(true);
    expect(await results()).toEqual([]);

    const notice = notified('call-1');
    gateOf('tides').resolve('tides: high at noon');
    await notice;
    const delivered = await results();
    expect(textOf(delivered).at(-1)).toBe('The tides: high at noon.');
    // ADK gives the model the call with its later response in place of the acknowledgement.
    expect(responsesIn(model.requests[2])).toEqual([
      { id: 'call-1', name: 'research', response: { output: completed('research', 'tides: high at noon') } },
    ]);
    expect(shown(model.requests[2])).not.toContain('continuing in the background');
    // Once: not brought again, and shown once in the next turn.
    expect(await results()).toEqual([]);
    await turn('Anything else?');
    expect(responsesIn(model.requests[3])).toEqual([
      { id: 'call-1', name: 'research', response: { output: completed('research', 'tides: high at noon') } },
    ]);
    expect(await runtime.get('call-1')).toMatchObject({ status: 'succeeded' });
  });

  it('brings back a call cancelled in the background as its failure', async () => {
    const { runtime, model, turn, results, promoteWhenStarted, notified } = await setUp([
      callFunction('call-1', 'research', { topic: 'tides' }),
      say('It goes on in the background.'),
      say('The research was cancelled.'),
    ]);
    const promoted = promoteWhenStarted('research');
    await turn('Research the tides.');
    await promoted;
    const notice = notified('call-1');
    expect(await runtime.cancel('call-1', 'the user changed their mind')).toBe(true);
    await notice;
    await results();
    const [response] = responsesIn(model.requests[2]);
    expect(response).toMatchObject({
      id: 'call-1',
      name: 'research',
      response: { error: expect.any(String) },
    });
    expect(JSON.stringify(response)).toContain('cancel');
    expect(await runtime.get('call-1')).toMatchObject({ status: 'cancelled' });
  });

  it('cancels the call when the run is aborted before it answers', async () => {
    const { runtime, runner, sessionId } = await setUp([
      callFunction('call-1', 'research', { topic: 'tides' }),
    ]);
    const abort = new AbortController();
    const started = firstValueFrom(runtime.events$.pipe(filter((event) => event.type === 'started')));
    const run = (async () => {
      for await (const _event of runner.runAsync({
        userId: USER,
        sessionId,
        newMessage: { role: 'user', parts: [{ text: 'Research the tides.' }] },
        abortSignal: abort.signal,
      })) {
        // The events of an aborted run are not looked at.
      }
    })();
    await started;
    abort.abort();
    await run;
    await expect.poll(async () => (await runtime.get('call-1'))?.status).toBe('cancelled');
  });

  it('adds a silent result to the session without a run, for the model to see at its next turn', async () => {
    const { model, gateOf, turn, results, promoteWhenStarted, notified } = await setUp([
      callFunction('call-1', 'archive', { topic: 'tides' }),
      say('Archiving.'),
      say('It is archived.'),
    ]);
    const promoted = promoteWhenStarted('archive');
    await turn('Archive the tides.');
    await promoted;
    const notice = notified('call-1');
    gateOf('archive tides').resolve('archived');
    await notice;
    expect(await results()).toEqual([]);
    expect(model.requests).toHaveLength(2);
    await turn('Is it done?');
    expect(responsesIn(model.requests[2])).toContainEqual({
      id: 'call-1',
      name: 'archive',
      response: { output: completed('archive', 'archived') },
    });
  });

  it('keeps a when_idle result until the agent is idle', async () => {
    const { model, gateOf, turn, results, promoteWhenStarted, notified } = await setUp([
      callFunction('call-1', 'research', { topic: 'tides' }),
      say('It goes on in the background.'),
      say('The tides: high at noon.'),
    ]);
    const promoted = promoteWhenStarted('research');
    await turn('Research the tides.');
    await promoted;
    const notice = notified('call-1');
    gateOf('tides').resolve('tides: high at noon');
    await notice;
    expect(await results(false)).toEqual([]);
    expect(model.requests).toHaveLength(2);
    expect(textOf(await results(true)).at(-1)).toBe('The tides: high at noon.');
  });

  it('asks for approval through ADK tool confirmation, and runs the call once approved', async () => {
    const { runtime, model, turn, answer } = await setUp([
      callFunction('call-1', 'delete_file', { path: '/tmp/a' }),
      say('Deleted.'),
    ]);
    const asked = await turn('Delete /tmp/a.');
    const confirmation = asked
      .flatMap(getFunctionCalls)
      .find((call) => call.name === 'adk_request_confirmation');
    expect(confirmation?.args).toMatchObject({
      originalFunctionCall: { id: 'call-1', name: 'delete_file' },
      toolConfirmation: { payload: { callId: 'call-1' } },
    });
    expect(await runtime.get('call-1')).toMatchObject({ status: 'queued', approval: 'pending' });
    expect(model.requests).toHaveLength(1);

    const answered = await answer(confirmation?.id, true);
    expect(textOf(answered).at(-1)).toBe('Deleted.');
    expect(responsesIn(model.requests[1])).toContainEqual({
      id: 'call-1',
      name: 'delete_file',
      response: { output: 'deleted /tmp/a' },
    });
    expect(await runtime.get('call-1')).toMatchObject({ status: 'succeeded', approval: 'approved' });
  });

  it('rejects the call when the user declines, and tells the model', async () => {
    const { runtime, model, turn, answer } = await setUp([
      callFunction('call-1', 'delete_file', { path: '/tmp/a' }),
      say('I did not delete it.'),
    ]);
    const asked = await turn('Delete /tmp/a.');
    const confirmation = asked
      .flatMap(getFunctionCalls)
      .find((call) => call.name === 'adk_request_confirmation');
    // The run stops at the question: the model is not asked to speak of it.
    expect(asked.at(-1)?.longRunningToolIds).toEqual([confirmation?.id]);
    expect(model.requests).toHaveLength(1);
    await answer(confirmation?.id, false);
    const [response] = responsesIn(model.requests[1]).filter((part) => part.id === 'call-1');
    expect(response?.response).toMatchObject({ error: expect.stringContaining('rejected by the user') });
    expect((await runtime.get('call-1'))?.approval).toBe('rejected');
  });
});
