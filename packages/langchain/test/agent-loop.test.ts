import type { Runtime } from '@baton/runtime';
import { agentLoopRuntime } from '@baton/test-support';
import { AIMessage, type BaseMessage, HumanMessage, ToolMessage } from '@langchain/core/messages';
import { Command, MemorySaver } from '@langchain/langgraph';
import { createAgent } from 'langchain';
import { filter, firstValueFrom } from 'rxjs';
import { afterEach, describe, expect, it } from 'vitest';
import {
  type BatonApprovalRequest,
  batonLangChainTools,
  batonNotificationsMiddleware,
} from '../src/index.js';
import { ScriptedChatModel } from './scripted-chat-model.js';

const BUDGET_MS = 300;
const SESSION = 'chat-1';
const ACKNOWLEDGEMENT = `This tool is taking longer than ${BUDGET_MS} ms, so it is continuing in the background.`;

const call = (id: string, name: string, args: Record<string, unknown>) =>
  new AIMessage({ content: '', tool_calls: [{ id, name, args, type: 'tool_call' }] });
const say = (text: string) => new AIMessage(text);

/** Everything the model was shown in one request, as text. */
const shown = (messages: BaseMessage[] | undefined) =>
  (messages ?? []).map((message) => (typeof message.content === 'string' ? message.content : '')).join('\n');

const opened: Runtime[] = [];
afterEach(async () => {
  await Promise.all(opened.splice(0).map((runtime) => runtime.close()));
});

function setUp(script: AIMessage[]) {
  const { runtime, clock, gateOf } = agentLoopRuntime();
  opened.push(runtime);
  const model = new ScriptedChatModel(script);
  const agent = createAgent({
    model,
    tools: batonLangChainTools(runtime, { sessionId: SESSION }),
    middleware: [batonNotificationsMiddleware(runtime, { sessionId: SESSION })],
    checkpointer: new MemorySaver(),
  });
  /** The budget passes as soon as the research runs: the call goes to the background. */
  const promoteWhenStarted = () =>
    firstValueFrom(
      runtime.events$.pipe(filter((event) => event.type === 'started' && event.toolName === 'research')),
    ).then(() => clock.increment(BUDGET_MS));
  return { runtime, gateOf, model, agent, promoteWhenStarted };
}

const thread = (id: string) => ({ configurable: { thread_id: id } });

describe('a LangChain agent (createAgent, LangGraph underneath) with Baton tools', () => {
  it('answers a fast call inline, as the tool message of its tool call', async () => {
    const { runtime, model, agent } = setUp([call('call-f', 'look_up', { word: 'tide' }), say('A word.')]);
    const result = await agent.invoke({ messages: [new HumanMessage('What is a tide?')] }, thread('fast'));
    const answer = result.messages.find((message) => ToolMessage.isInstance(message));
    expect(answer).toMatchObject({ tool_call_id: 'call-f', content: 'tide: a word', status: 'success' });
    expect(shown(model.requests[1])).toContain('tide: a word');
    expect(await runtime.get('call-f')).toMatchObject({ status: 'succeeded', sessionId: SESSION });
  });

  it('hears the acknowledgement at the budget, goes on, and gets the result before the next turn, once', async () => {
    const { runtime, gateOf, model, agent, promoteWhenStarted } = setUp([
      call('call-1', 'research', { topic: 'tides' }),
      say('The research goes on in the background.'),
      say('The tides came back.'),
      say('Nothing new.'),
    ]);
    const promoted = promoteWhenStarted();
    const first = await agent.invoke({ messages: [new HumanMessage('Research the tides.')] }, thread('t'));
    await promoted;
    expect(shown(model.requests[1])).toContain(ACKNOWLEDGEMENT);
    expect(first.messages.at(-1)?.content).toBe('The research goes on in the background.');
    expect((await runtime.get('call-1'))?.status).toBe('backgrounded');

    // It ends while the user is away: the next turn gives the model its result first, once.
    const noticed = firstValueFrom(
      runtime.follow({ sessionId: SESSION }).pipe(filter(({ event }) => event.type === 'notification')),
    );
    gateOf('tides').resolve('high at noon');
    await noticed;
    const second = await agent.invoke({ messages: [new HumanMessage('So?')] }, thread('t'));
    const occurrences = (messages: BaseMessage[] | undefined) =>
      shown(messages).split('high at noon').length - 1;
    expect(occurrences(model.requests[2])).toBe(1);
    // Before the user's words, which came after it.
    const contents = second.messages.map((message) => message.content);
    expect(contents.findIndex((text) => String(text).includes('high at noon'))).toBeLessThan(
      contents.indexOf('So?'),
    );
    expect(second.messages.at(-1)?.content).toBe('The tides came back.');

    const third = await agent.invoke({ messages: [new HumanMessage('Anything else?')] }, thread('t'));
    expect(occurrences(model.requests[3])).toBe(1);
    expect(third.messages.at(-1)?.content).toBe('Nothing new.');
    expect(await runtime.notifications.list({ sessionId: SESSION, status: 'queued' })).toEqual([]);
  });

  it('cancels the Baton call when the run is aborted before the tool answers', async () => {
    const { runtime, agent } = setUp([call('call-9', 'research', { topic: 'winds' })]);
    const stop = new AbortController();
    const started = firstValueFrom(runtime.events$.pipe(filter((event) => event.type === 'started')));
    const run = agent.invoke(
      { messages: [new HumanMessage('Go')] },
      { ...thread('abort'), signal: stop.signal },
    );
    await started;
    stop.abort();
    await expect(run).rejects.toThrow();
    await firstValueFrom(
      runtime.follow({ callId: 'call-9' }).pipe(filter((event) => event.type === 'cancelled')),
    );
    expect((await runtime.get('call-9'))?.status).toBe('cancelled');
  });

  it('asks for approval through interrupt(); resuming with approved runs the Baton call, across the checkpointer', async () => {
    const { runtime, model, agent } = setUp([
      call('call-a', 'delete_file', { path: '/tmp/a' }),
      say('Deleted.'),
    ]);
    const paused = await agent.invoke({ messages: [new HumanMessage('Delete /tmp/a')] }, thread('approve'));
    const asked = (paused as { __interrupt__?: Array<{ value: BatonApprovalRequest }> }).__interrupt__;
    expect(asked?.map(({ value }) => value)).toEqual([
      { type: 'baton_approval', callId: 'call-a', tool: 'delete_file', args: { path: '/tmp/a' } },
    ]);
    expect(await runtime.get('call-a')).toMatchObject({ status: 'queued', approval: 'pending' });

    const resumed = await agent.invoke(new Command({ resume: { approved: true } }), thread('approve'));
    expect(resumed.messages.at(-1)?.content).toBe('Deleted.');
    expect(shown(model.requests[1])).toContain('deleted /tmp/a');
    expect(await runtime.get('call-a')).toMatchObject({ status: 'succeeded', approval: 'approved' });
  });

  it('rejects the Baton call when resumed with approved: false, and tells the model why', async () => {
    const { runtime, model, agent } = setUp([
      call('call-r', 'delete_file', { path: '/etc' }),
      say('I will not.'),
    ]);
    await agent.invoke({ messages: [new HumanMessage('Delete /etc')] }, thread('reject'));
    const resumed = await agent.invoke(
      new Command({ resume: { approved: false, reason: 'not that one' } }),
      thread('reject'),
    );
    const answer = resumed.messages.find((message) => ToolMessage.isInstance(message));
    expect(answer).toMatchObject({ tool_call_id: 'call-r', status: 'error' });
    expect(String(answer?.content)).toContain('not that one');
    expect(shown(model.requests[1])).toContain('not that one');
    expect(await runtime.get('call-r')).toMatchObject({ status: 'failed', approval: 'rejected' });
  });
});
