import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Runtime } from '@baton/runtime';
import { recoveredAndNotified, restartingRuntime } from '@baton/test-support';
import { AIMessage, type BaseMessage, HumanMessage } from '@langchain/core/messages';
import { MemorySaver } from '@langchain/langgraph';
import { createAgent } from 'langchain';
import { filter, firstValueFrom } from 'rxjs';
import { afterAll, describe, expect, it } from 'vitest';
import { batonLangChainTools, batonNotificationsMiddleware } from '../src/index.js';
import { ScriptedChatModel } from './scripted-chat-model.js';

const dir = mkdtempSync(join(tmpdir(), 'baton-langchain-restart-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const SESSION = 'chat-1';

describe('a LangChain agent across a restart of the Baton runtime (SQLite)', () => {
  it('is acknowledged before the restart, and the result reaches the model once after it', async () => {
    const checkpointer = new MemorySaver();
    const thread = { configurable: { thread_id: 'restart' } };
    const agentOn = (runtime: Runtime, model: ScriptedChatModel) =>
      createAgent({
        model,
        tools: batonLangChainTools(runtime, { sessionId: SESSION }),
        middleware: [batonNotificationsMiddleware(runtime, { sessionId: SESSION })],
        checkpointer,
      });

    const first = restartingRuntime(join(dir, 'baton.db'), true);
    const before = new ScriptedChatModel([
      new AIMessage({
        content: '',
        tool_calls: [{ id: 'call-1', name: 'research', args: { topic: 'tides' }, type: 'tool_call' }],
      }),
      new AIMessage('It goes on in the background.'),
    ]);
    const promoted = firstValueFrom(
      first.runtime.events$.pipe(filter((event) => event.type === 'started')),
    ).then(() => first.clock.increment(300));
    await agentOn(first.runtime, before).invoke(
      { messages: [new HumanMessage('Research the tides.')] },
      thread,
    );
    await promoted;
    expect((await first.runtime.get('call-1'))?.status).toBe('backgrounded');
    await first.runtime.close();

    // The next runtime recovers the call, runs it again (it is idempotent), and its end is a notification.
    const second = restartingRuntime(join(dir, 'baton.db'), false);
    await recoveredAndNotified(second, SESSION);
    const after = new ScriptedChatModel([new AIMessage('Noon, then.'), new AIMessage('Nothing new.')]);
    const agent = agentOn(second.runtime, after);
    const turn = await agent.invoke({ messages: [new HumanMessage('So?')] }, thread);
    expect(turn.messages.at(-1)?.content).toBe('Noon, then.');
    const occurrences = (messages: BaseMessage[] | undefined) =>
      (messages ?? []).filter((message) => String(message.content).includes('tides: high at noon')).length;
    expect(occurrences(after.requests[0])).toBe(1);
    await agent.invoke({ messages: [new HumanMessage('And?')] }, thread);
    expect(occurrences(after.requests[1])).toBe(1);
    expect(await second.runtime.get('call-1')).toMatchObject({ status: 'succeeded' });
    await second.runtime.close();
  }, 30_000);
});
