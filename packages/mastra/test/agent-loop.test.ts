import type { Runtime } from '@baton/runtime';
import { agentLoopRuntime } from '@baton/test-support';
import { Mastra } from '@mastra/core';
import { Agent } from '@mastra/core/agent';
import { InMemoryStore } from '@mastra/core/storage';
import { filter, firstValueFrom } from 'rxjs';
import { afterEach, describe, expect, it } from 'vitest';
import { type BatonApprovalRequest, batonMastraTools, batonNotificationsProcessor } from '../src/index.js';
import { callTool, type ScriptedAnswer, say, scriptedModel, shown, toolResultsIn } from './scripted-model.js';

const BUDGET_MS = 300;
const SESSION = 'chat-1';

const opened: Runtime[] = [];
afterEach(async () => {
  await Promise.all(opened.splice(0).map((runtime) => runtime.close()));
});

function setUp(script: ScriptedAnswer[]) {
  const { runtime, clock, gateOf } = agentLoopRuntime();
  opened.push(runtime);
  const { model, prompts } = scriptedModel(script);
  const assistant = new Agent({
    id: 'assistant',
    name: 'assistant',
    instructions: 'Help.',
    model,
    tools: batonMastraTools(runtime, { sessionId: SESSION }),
    inputProcessors: [batonNotificationsProcessor(runtime, { sessionId: SESSION })],
  });
  // The Mastra instance keeps a suspended run's snapshot, for approvals.
  const agent = new Mastra({ agents: { assistant }, storage: new InMemoryStore(), logger: false }).getAgent(
    'assistant',
  );
  const promoteWhenStarted = () =>
    firstValueFrom(runtime.events$.pipe(filter((event) => event.type === 'started'))).then(() =>
      clock.increment(BUDGET_MS),
    );
  const notified = () =>
    firstValueFrom(runtime.events$.pipe(filter((event) => event.type === 'notification')));
  return { runtime, agent, prompts, gateOf, promoteWhenStarted, notified };
}

describe('Baton tools in a Mastra agent', () => {
  it('answers a fast call inline, with its output as the tool result', async () => {
    const { runtime, agent, prompts } = setUp([
      callTool('call-1', 'look_up', { word: 'tide' }),
      say('A tide is a word.'),
    ]);
    const result = await agent.generate('What is a tide?');
    expect(result.text).toBe('A tide is a word.');
    expect(toolResultsIn(prompts[1])).toEqual([
      expect.objectContaining({ toolCallId: 'call-1', output: { type: 'text', value: 'tide: a word' } }),
    ]);
    expect(await runtime.get('call-1')).toMatchObject({ status: 'succeeded', sessionId: SESSION });
  });

  it('acknowledges a slow call at its budget, and brings its result before the next turn once', async () => {
    const { agent, prompts, gateOf, promoteWhenStarted, notified } = setUp([
      callTool('call-1', 'research', { topic: 'tides' }),
      say('It goes on in the background.'),
      say('High tide is at noon.'),
      say('Nothing new.'),
    ]);
    const promoted = promoteWhenStarted();
    const first = await agent.generate('Research the tides.');
    await promoted;
    expect(first.text).toBe('It goes on in the background.');
    expect(toolResultsIn(prompts[1])).toEqual([
      expect.objectContaining({
        toolCallId: 'call-1',
        output: { type: 'json', value: expect.objectContaining({ status: 'running', call_id: 'call-1' }) },
      }),
    ]);

    const notice = notified();
    gateOf('tides').resolve('tides: high at noon');
    await notice;
    const second = await agent.generate([...first.messages, { role: 'user', content: 'So?' }]);
    expect(second.text).toBe('High tide is at noon.');
    const asked = shown(prompts[2]);
    expect(asked.split('tides: high at noon').length - 1).toBe(1);
    // The result came before the user's new words.
    expect(asked.indexOf('tides: high at noon')).toBeLessThan(asked.indexOf('So?'));
    await agent.generate([...second.messages, { role: 'user', content: 'Anything else?' }]);
    expect(shown(prompts[3]).split('tides: high at noon').length - 1).toBe(1);
  });

  it('cancels the call when the run is aborted before it answers', async () => {
    const { runtime, agent } = setUp([callTool('call-1', 'research', { topic: 'tides' }), say('Stopped.')]);
    const abort = new AbortController();
    const started = firstValueFrom(runtime.events$.pipe(filter((event) => event.type === 'started')));
    const run = agent.generate('Research the tides.', { abortSignal: abort.signal }).catch(() => undefined);
    await started;
    abort.abort();
    await run;
    await expect.poll(async () => (await runtime.get('call-1'))?.status).toBe('cancelled');
  });

  it('suspends the run for approval, and runs the call once approved', async () => {
    const { runtime, agent, prompts } = setUp([
      callTool('call-1', 'delete_file', { path: '/tmp/a' }),
      say('Deleted.'),
    ]);
    const asked = await agent.generate('Delete /tmp/a.');
    expect(asked.finishReason).toBe('suspended');
    expect(asked.suspendPayload).toMatchObject({
      toolCallId: 'call-1',
      suspendPayload: {
        type: 'baton_approval',
        callId: 'call-1',
        tool: 'delete_file',
      } satisfies Partial<BatonApprovalRequest>,
    });
    expect(await runtime.get('call-1')).toMatchObject({ status: 'queued', approval: 'pending' });
    const resumed = await agent.resumeGenerate(
      { approved: true },
      { runId: asked.runId, toolCallId: 'call-1' },
    );
    expect(resumed.text).toBe('Deleted.');
    expect(toolResultsIn(prompts[1])).toEqual([
      expect.objectContaining({ toolCallId: 'call-1', output: { type: 'text', value: 'deleted /tmp/a' } }),
    ]);
    expect(await runtime.get('call-1')).toMatchObject({ status: 'succeeded', approval: 'approved' });
  });

  it('rejects the call when the user declines, and tells the model why', async () => {
    const { runtime, agent, prompts } = setUp([
      callTool('call-1', 'delete_file', { path: '/tmp/a' }),
      say('I did not.'),
    ]);
    const asked = await agent.generate('Delete /tmp/a.');
    await agent.resumeGenerate(
      { approved: false, reason: 'not that file' },
      { runId: asked.runId, toolCallId: 'call-1' },
    );
    expect(toolResultsIn(prompts[1])).toEqual([
      expect.objectContaining({
        toolCallId: 'call-1',
        output: { type: 'error-text', value: expect.stringContaining('not that file') },
      }),
    ]);
    expect(await runtime.get('call-1')).toMatchObject({ approval: 'rejected' });
  });
});
