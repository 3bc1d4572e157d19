import { defineTool } from '@baton/contracts';
import { createRuntime, type Runtime } from '@baton/runtime';
import { deferred, memoryStore, SimulatedClock } from '@baton/runtime/testing';
import { generateText, type ModelMessage, stepCountIs } from 'ai';
import { MockLanguageModelV3 } from 'ai/test';
import { filter, firstValueFrom } from 'rxjs';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { batonApprovalResponses, batonNotifications, batonTools, responseMessagesOf } from '../src/index.js';

const BUDGET_MS = 300;
const SESSION = 'chat-1';

type Prompt = Parameters<MockLanguageModelV3['doGenerate']>[0]['prompt'];
type Content = Awaited<ReturnType<MockLanguageModelV3['doGenerate']>>['content'];

const usage = {
  inputTokens: { total: 10, noCache: 10, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: 5, text: 5, reasoning: undefined },
};
const toolCall = (toolCallId: string, toolName: string, input: unknown): Content[number] => ({
  type: 'tool-call',
  toolCallId,
  toolName,
  input: JSON.stringify(input),
});
const text = (value: string): Content[number] => ({ type: 'text', text: value });

/** A model scripted step by step; it keeps every prompt it was given. */
function scriptedModel(steps: Content[]) {
  const prompts: Prompt[] = [];
  const model = new MockLanguageModelV3({
    doGenerate: async (options) => {
      prompts.push(options.prompt);
      const content = steps.shift() ?? [text('(no more script)')];
      const calls = content.some((part) => part.type === 'tool-call');
      return {
        content,
        finishReason: { unified: calls ? 'tool-calls' : 'stop', raw: undefined },
        usage,
        warnings: [],
      };
    },
  });
  return { model, prompts };
}

/** Everything the model was shown in one prompt, as text. */
const shown = (prompt: Prompt | undefined) => JSON.stringify(prompt ?? []);

const opened: Runtime[] = [];
afterEach(async () => {
  await Promise.all(opened.splice(0).map((runtime) => runtime.close()));
});

function setUp() {
  const gate = deferred<string>();
  const research = defineTool({
    name: 'research',
    description: 'Researches a topic; takes minutes',
    input: z.object({ topic: z.string() }),
    execution: { mode: 'auto' },
    async execute({ topic }, ctx) {
      ctx.signal.addEventListener('abort', () => gate.reject(ctx.signal.reason));
      return `${topic}: ${await gate.promise}`;
    },
  });
  const clockTime = defineTool({
    name: 'clock_time',
    description: 'The time',
    input: z.object({}),
    execute: async () => '12:00',
  });
  const clock = new SimulatedClock();
  const runtime = createRuntime({
    tools: [research, clockTime],
    store: memoryStore(),
    clock,
    inlineBudgetMs: BUDGET_MS,
  });
  opened.push(runtime);
  /** The budget passes as soon as the research runs: the call goes to the background. */
  const promoteWhenStarted = () =>
    firstValueFrom(
      runtime.events$.pipe(filter((event) => event.type === 'started' && event.toolName === 'research')),
    ).then((event) => {
      clock.increment(BUDGET_MS);
      return event.callId;
    });
  return { runtime, gate, promoteWhenStarted };
}

describe('an AI SDK agent loop with Baton tools', () => {
  it('hears the acknowledgement at the budget, goes on, and gets the result back once, as a message', async () => {
    const { runtime, gate, promoteWhenStarted } = setUp();
    const tools = batonTools(runtime, { sessionId: SESSION });
    const notifications = batonNotifications(runtime, { sessionId: SESSION });
    const { model, prompts } = scriptedModel([
      [toolCall('call-1', 'research', { topic: 'tides' })],
      [text('I started the research; it goes on in the background.')],
      [text('It is sunny.')],
      [toolCall('call-2', 'clock_time', {})],
      [text('At 12:00 the research came back: tides: high at noon.')],
    ]);
    const history: ModelMessage[] = [{ role: 'user', content: 'Research the tides.' }];
    const turn = async (say: string | undefined) => {
      if (say) history.push({ role: 'user', content: say });
      const result = await generateText({
        model,
        tools,
        messages: history,
        prepareStep: notifications.prepareStep,
        onStepFinish: notifications.onStepFinish,
        stopWhen: stepCountIs(5),
      });
      const conversation = notifications.history([...history, ...responseMessagesOf(result)]);
      history.splice(0, history.length, ...conversation);
      return result;
    };

    // Turn 1: the tool call is answered at the budget with the acknowledgement.
    const promoted = promoteWhenStarted();
    const first = await turn(undefined);
    const callId = await promoted;
    expect(callId).toBe('call-1');
    expect(JSON.stringify(first.steps[0]?.toolResults)).toContain(
      `This tool is taking longer than ${BUDGET_MS} ms, so it is continuing in the background.`,
    );
    expect(first.text).toBe('I started the research; it goes on in the background.');
    expect((await runtime.get(callId))?.status).toBe('backgrounded');

    // Turn 2: the model talks about something else; nothing waits for the research.
    const second = await turn('And the weather?');
    expect(second.text).toBe('It is sunny.');
    expect(shown(prompts[2])).not.toContain('tides: high at noon');

    // The research ends; its notification comes into the next turn's first step, and stays once.
    const noticed = firstValueFrom(
      runtime.follow({ sessionId: SESSION }).pipe(filter(({ event }) => event.type === 'notification')),
    );
    gate.resolve('high at noon');
    await noticed;
    const third = await turn('Anything new?');
    const occurrences = (prompt: Prompt | undefined) => shown(prompt).split('tides: high at noon').length - 1;
    expect(occurrences(prompts[3])).toBe(1);
    expect(occurrences(prompts[4])).toBe(1);
    // Before the user's new words, as every bridge places a result that came while the user was idle.
    const firstStep = shown(prompts[3]);
    expect(firstStep.indexOf('tides: high at noon')).toBeLessThan(firstStep.indexOf('Anything new?'));
    // The history keeps it where the model saw it.
    expect(JSON.stringify(history[6])).toContain('tides: high at noon');
    expect(history.map((message) => message.role)).toEqual([
      'user',
      'assistant',
      'tool',
      'assistant',
      'user',
      'assistant',
      'user',
      'user',
      'assistant',
      'tool',
      'assistant',
    ]);
    expect(third.text).toBe('At 12:00 the research came back: tides: high at noon.');
    expect(await runtime.notifications.list({ sessionId: SESSION, status: 'queued' })).toEqual([]);
    expect(notifications.delivered).toHaveLength(1);
  });

  it('without onStepFinish: a result the last step was given is acknowledged at the next turn from its history, not given again', async () => {
    const { runtime, gate, promoteWhenStarted } = setUp();
    const tools = batonTools(runtime, { sessionId: SESSION });
    const notifications = batonNotifications(runtime, { sessionId: SESSION });
    const { model, prompts } = scriptedModel([
      [toolCall('call-1', 'research', { topic: 'tides' })],
      [text('It goes on in the background.')],
      [text('The tides are high at noon.')],
      [text('Nothing new.')],
      [text('Still nothing.')],
    ]);
    const history: ModelMessage[] = [{ role: 'user', content: 'Research the tides.' }];
    // The old README's loop: prepareStep alone, the history kept as it says.
    const turn = async (say: string | undefined) => {
      if (say) history.push({ role: 'user', content: say });
      const result = await generateText({
        model,
        tools,
        messages: history,
        prepareStep: notifications.prepareStep,
        stopWhen: stepCountIs(5),
      });
      history.splice(
        0,
        history.length,
        ...notifications.history([...history, ...responseMessagesOf(result)]),
      );
    };
    const promoted = promoteWhenStarted();
    await turn(undefined);
    await promoted;
    const noticed = firstValueFrom(
      runtime.follow({ sessionId: SESSION }).pipe(filter(({ event }) => event.type === 'notification')),
    );
    gate.resolve('high at noon');
    await noticed;
    // A turn of one step is given the result; its step is the turn's last.
    await turn('Anything new?');
    await turn('And now?');
    await turn('And now?');
    const occurrences = (prompt: Prompt | undefined) => shown(prompt).split('tides: high at noon').length - 1;
    expect(prompts.slice(2).map(occurrences)).toEqual([1, 1, 1]);
    expect(await runtime.notifications.list({ sessionId: SESSION, status: 'queued' })).toEqual([]);
    expect(notifications.delivered).toHaveLength(1);
  });

  it('cancels the Baton call when the run is aborted before the tool answers', async () => {
    const { runtime } = setUp();
    const { model } = scriptedModel([[toolCall('call-9', 'research', { topic: 'winds' })]]);
    const stop = new AbortController();
    const started = firstValueFrom(runtime.events$.pipe(filter((event) => event.type === 'started')));
    const run = generateText({
      model,
      tools: batonTools(runtime, { sessionId: SESSION }),
      prompt: 'Go',
      abortSignal: stop.signal,
    });
    await started;
    stop.abort();
    await run.catch(() => undefined);
    await firstValueFrom(
      runtime.follow({ callId: 'call-9' }).pipe(filter((event) => event.type === 'cancelled')),
    );
    expect((await runtime.get('call-9'))?.status).toBe('cancelled');
  });
});

describe('approvals through the AI SDK approval flow', () => {
  function withApproval(script: Content[]) {
    const deleteFile = defineTool({
      name: 'delete_file',
      description: 'Deletes a file',
      input: z.object({ path: z.string() }),
      execution: { needsApproval: true },
      execute: async ({ path }) => `deleted ${path}`,
    });
    const runtime = createRuntime({ tools: [deleteFile], store: memoryStore(), clock: new SimulatedClock() });
    opened.push(runtime);
    const { model, prompts } = scriptedModel(script);
    const tools = batonTools(runtime, { sessionId: SESSION });
    const history: ModelMessage[] = [{ role: 'user', content: 'Delete /tmp/a' }];
    const step = async () => {
      await batonApprovalResponses(runtime, history);
      const result = await generateText({ model, tools, messages: history, stopWhen: stepCountIs(3) });
      history.push(...responseMessagesOf(result));
      return result;
    };
    /** The user answers the step's approval request. */
    const answer = (result: Awaited<ReturnType<typeof step>>, approved: boolean, reason?: string) => {
      const request = result.content.find((part) => part.type === 'tool-approval-request');
      if (!request) throw new Error('no approval request');
      history.push({
        role: 'tool',
        content: [
          {
            type: 'tool-approval-response',
            approvalId: request.approvalId,
            approved,
            ...(reason ? { reason } : {}),
          },
        ],
      });
    };
    return { runtime, prompts, step, answer };
  }

  it('pauses on the approval request; approving it runs the Baton call and the model gets the result', async () => {
    const { runtime, prompts, step, answer } = withApproval([
      [toolCall('call-d', 'delete_file', { path: '/tmp/a' })],
      [text('Deleted /tmp/a.')],
    ]);
    const paused = await step();
    expect(paused.content.map((part) => part.type)).toContain('tool-approval-request');
    expect(await runtime.get('call-d')).toMatchObject({ status: 'queued', approval: 'pending' });

    answer(paused, true);
    const resumed = await step();
    expect(resumed.text).toBe('Deleted /tmp/a.');
    expect(await runtime.get('call-d')).toMatchObject({
      status: 'succeeded',
      approval: 'approved',
      output: 'deleted /tmp/a',
    });
    expect(shown(prompts[1])).toContain('deleted /tmp/a');
    // The model had the result in the loop: the session is not told again.
    expect(await runtime.notifications.list({ sessionId: SESSION, status: 'queued' })).toEqual([]);
  });

  it('denying it rejects the Baton call, which never runs, with the reason', async () => {
    const { runtime, prompts, step, answer } = withApproval([
      [toolCall('call-x', 'delete_file', { path: '/etc/passwd' })],
      [text('I will leave it.')],
    ]);
    answer(await step(), false, 'Not that file.');
    expect((await step()).text).toBe('I will leave it.');
    const record = await runtime.get('call-x');
    expect(record).toMatchObject({ approval: 'rejected' });
    expect(record?.output).not.toBe('deleted /etc/passwd');
    expect(record?.error?.message).toContain('Not that file.');
    expect(shown(prompts[1])).toContain('Not that file.');
  });
});
