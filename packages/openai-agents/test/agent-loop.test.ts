import { defineTool } from '@baton/contracts';
import { createRuntime, type Runtime } from '@baton/runtime';
import { type Deferred, deferred, memoryStore, SimulatedClock } from '@baton/runtime/testing';
import {
  Agent,
  type AgentInputItem,
  type AgentOutputItem,
  type Model,
  type ModelRequest,
  type ModelResponse,
  Runner,
  Usage,
} from '@openai/agents';
import { filter, firstValueFrom } from 'rxjs';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { batonAgentNotifications, batonAgentTools, batonApprovals } from '../src/index.js';

const BUDGET_MS = 300;
const SESSION = 'chat-1';
const ACKNOWLEDGEMENT = `This tool is taking longer than ${BUDGET_MS} ms, so it is continuing in the background.`;

const call = (callId: string, name: string, args: unknown): AgentOutputItem => ({
  type: 'function_call',
  callId,
  name,
  arguments: JSON.stringify(args),
  status: 'completed',
});
const say = (text: string): AgentOutputItem => ({
  type: 'message',
  role: 'assistant',
  status: 'completed',
  content: [{ type: 'output_text', text }],
});

/** A model of the test's own, scripted response by response; it keeps every request it was given. */
class ScriptedModel implements Model {
  readonly requests: ModelRequest[] = [];
  constructor(private readonly script: AgentOutputItem[][]) {}
  async getResponse(request: ModelRequest): Promise<ModelResponse> {
    this.requests.push(request);
    return { usage: new Usage(), output: this.script.shift() ?? [say('(no more script)')] };
  }
  // biome-ignore lint/correctness/useYield: the loop under test never streams.
  async *getStreamedResponse(): AsyncIterable<never> {
    throw new Error('the scripted model does not stream');
  }
}

/** Everything the model was shown in one request, as text. */
const shown = (request: ModelRequest | undefined) => JSON.stringify(request?.input ?? []);

const opened: Runtime[] = [];
afterEach(async () => {
  await Promise.all(opened.splice(0).map((runtime) => runtime.close()));
});

function setUp(script: AgentOutputItem[][]) {
  /** One gate per topic: the test ends each research by hand. */
  const gates = new Map<string, Deferred<string>>();
  const gateOf = (topic: string) => {
    const gate = gates.get(topic) ?? deferred<string>();
    gates.set(topic, gate);
    return gate;
  };
  const research = defineTool({
    name: 'research',
    description: 'Researches a topic; takes minutes',
    input: z.object({ topic: z.string() }),
    execution: { mode: 'auto', scheduling: 'interrupt' },
    async execute({ topic }, ctx) {
      const gate = gateOf(topic);
      ctx.signal.addEventListener('abort', () => gate.reject(ctx.signal.reason));
      return `${topic}: ${await gate.promise}`;
    },
  });
  const deleteFile = defineTool({
    name: 'delete_file',
    description: 'Deletes a file',
    input: z.object({ path: z.string() }),
    execution: { needsApproval: true },
    execute: async ({ path }) => `deleted ${path}`,
  });
  const clock = new SimulatedClock();
  const runtime = createRuntime({
    tools: [research, deleteFile],
    store: memoryStore(),
    clock,
    inlineBudgetMs: BUDGET_MS,
  });
  opened.push(runtime);
  const model = new ScriptedModel(script);
  const agent = new Agent({
    name: 'assistant',
    instructions: 'Help.',
    model,
    tools: batonAgentTools(runtime, { sessionId: SESSION }),
  });
  const notifications = batonAgentNotifications(runtime, { sessionId: SESSION });
  const runner = new Runner({
    tracingDisabled: true,
    callModelInputFilter: notifications.callModelInputFilter,
  });
  /** The budget passes as soon as the research runs: the call goes to the background. */
  const promoteWhenStarted = () =>
    firstValueFrom(
      runtime.events$.pipe(filter((event) => event.type === 'started' && event.toolName === 'research')),
    ).then(() => clock.increment(BUDGET_MS));
  return { runtime, gateOf, model, agent, runner, notifications, promoteWhenStarted };
}

describe('an OpenAI Agents loop with Baton tools', () => {
  it('hears the acknowledgement at the budget, goes on, and gets the result at the next step, once', async () => {
    const { runtime, gateOf, model, agent, runner, notifications, promoteWhenStarted } = setUp([
      [call('call-1', 'research', { topic: 'tides' })],
      [say('The research goes on in the background.')],
      [call('call-2', 'research', { topic: 'winds' })],
      [say('Winds are being researched too.')],
      [say('The tides came back: high at noon.')],
    ]);
    let history: AgentInputItem[] = [];
    const turn = async (words: string) => {
      const input = [
        ...history,
        ...(await notifications.turnInput()),
        { role: 'user' as const, content: words },
      ];
      const result = await runner.run(agent, input);
      history = await notifications.history(result.history);
      return result;
    };

    // Turn 1: the call is answered at the budget with the acknowledgement; the run goes on.
    const promoted = promoteWhenStarted();
    const first = await turn('Research the tides.');
    await promoted;
    expect(model.requests[0]?.tools.map((tool) => [tool.name, 'strict' in tool && tool.strict])).toEqual([
      ['research', true],
      ['delete_file', true],
    ]);
    expect(shown(model.requests[1])).toContain(ACKNOWLEDGEMENT);
    expect(first.finalOutput).toBe('The research goes on in the background.');
    expect((await runtime.get('call-1'))?.status).toBe('backgrounded');

    // Turn 2: the model starts another research; while it runs, the first one ends. Its
    // notification (interrupt) comes into the next model call of this run, once, and stays there.
    const noticed = firstValueFrom(
      runtime.follow({ sessionId: SESSION }).pipe(filter(({ event }) => event.type === 'notification')),
    );
    const promotedAgain = promoteWhenStarted().then(async () => {
      gateOf('tides').resolve('high at noon');
      await noticed;
    });
    const second = await turn('And the winds?');
    await promotedAgain;
    expect(second.finalOutput).toBe('Winds are being researched too.');
    const occurrences = (request: ModelRequest | undefined) =>
      shown(request).split('high at noon').length - 1;
    expect(occurrences(model.requests[2])).toBe(0);
    expect(occurrences(model.requests[3])).toBe(1);

    // Turn 3: the history keeps the notification where it was given, once; the answer uses it.
    const third = await turn('So?');
    expect(occurrences(model.requests[4])).toBe(1);
    expect(third.finalOutput).toBe('The tides came back: high at noon.');
    expect(await runtime.notifications.list({ sessionId: SESSION, status: 'queued' })).toEqual([]);
  });

  it('cancels the Baton call when the run is aborted before the tool answers', async () => {
    const { runtime, agent, runner } = setUp([[call('call-9', 'research', { topic: 'winds' })]]);
    const stop = new AbortController();
    const started = firstValueFrom(runtime.events$.pipe(filter((event) => event.type === 'started')));
    const run = runner.run(agent, 'Go', { signal: stop.signal });
    await started;
    stop.abort();
    await run.catch(() => undefined);
    await firstValueFrom(
      runtime.follow({ callId: 'call-9' }).pipe(filter((event) => event.type === 'cancelled')),
    );
    expect((await runtime.get('call-9'))?.status).toBe('cancelled');
  });

  it('pauses the run on an approval; resuming with approve runs the Baton call', async () => {
    const { runtime, model, agent, runner } = setUp([
      [call('call-a', 'delete_file', { path: '/tmp/a' })],
      [say('Deleted.')],
    ]);
    const paused = await runner.run(agent, 'Delete /tmp/a');
    expect(paused.interruptions?.map((item) => item.name)).toEqual(['delete_file']);
    expect(await runtime.get('call-a')).toMatchObject({ status: 'queued', approval: 'pending' });

    const item = paused.interruptions?.[0];
    if (!item) throw new Error('no interruption');
    await batonApprovals(runtime).approve(paused.state, item);
    const resumed = await runner.run(agent, paused.state);
    expect(resumed.finalOutput).toBe('Deleted.');
    expect(await runtime.get('call-a')).toMatchObject({ status: 'succeeded', approval: 'approved' });
    expect(shown(model.requests[1])).toContain('deleted /tmp/a');
    // The model had the result in the run: the session is not told again.
    expect(await runtime.notifications.list({ sessionId: SESSION, status: 'queued' })).toEqual([]);
  });

  it('a plain state.approve reaches the Baton call when the run resumes', async () => {
    const { runtime, agent, runner } = setUp([
      [call('call-p', 'delete_file', { path: '/tmp/p' })],
      [say('Done.')],
    ]);
    const paused = await runner.run(agent, 'Delete /tmp/p');
    const item = paused.interruptions?.[0];
    if (!item) throw new Error('no interruption');
    paused.state.approve(item);
    expect((await runner.run(agent, paused.state)).finalOutput).toBe('Done.');
    expect(await runtime.get('call-p')).toMatchObject({ status: 'succeeded', output: 'deleted /tmp/p' });
  });

  it('resuming with reject ends the Baton call without running it, and the model hears why', async () => {
    const { runtime, model, agent, runner } = setUp([
      [call('call-r', 'delete_file', { path: '/etc/passwd' })],
      [say('I will not delete it.')],
    ]);
    const paused = await runner.run(agent, 'Delete /etc/passwd');
    const item = paused.interruptions?.[0];
    if (!item) throw new Error('no interruption');
    await batonApprovals(runtime).reject(paused.state, item, { message: 'Not that file.' });
    const resumed = await runner.run(agent, paused.state);
    expect(resumed.finalOutput).toBe('I will not delete it.');
    expect(shown(model.requests[1])).toContain('Not that file.');
    const record = await runtime.get('call-r');
    expect(record).toMatchObject({ approval: 'rejected' });
    expect(record?.status).not.toBe('succeeded');
    expect(record?.output).not.toBe('deleted /etc/passwd');
  });
});
