import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { defineTool } from '@baton/contracts';
import { createRuntime, type Runtime } from '@baton/runtime';
import { SimulatedClock } from '@baton/runtime/testing';
import { sqliteStore } from '@baton/store-sqlite';
import { AIMessage, type BaseMessage, HumanMessage } from '@langchain/core/messages';
import { MemorySaver } from '@langchain/langgraph';
import { createAgent } from 'langchain';
import { filter, firstValueFrom } from 'rxjs';
import { afterAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { batonLangChainTools, batonNotificationsMiddleware } from '../src/index.js';
import { ScriptedChatModel } from './scripted-chat-model.js';

const dir = mkdtempSync(join(tmpdir(), 'baton-langchain-restart-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const SESSION = 'chat-1';

/** The process's runtime on the SQLite file; its research hangs in the first one and answers in the next. */
function processRuntime(hangs: boolean): { runtime: Runtime; clock: SimulatedClock } {
  const research = defineTool({
    name: 'research',
    description: 'Researches a topic; takes minutes',
    input: z.object({ topic: z.string() }),
    execution: { mode: 'auto', idempotent: true },
    execute: ({ topic }) => (hangs ? new Promise<string>(() => {}) : `${topic}: high at noon`),
  });
  const clock = new SimulatedClock();
  const runtime = createRuntime({
    tools: [research],
    store: sqliteStore({ path: join(dir, 'baton.db') }),
    clock,
    inlineBudgetMs: 300,
  });
  return { runtime, clock };
}

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

    const first = processRuntime(true);
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

    // The next runtime recovers the call once the first one's lease has lapsed (in this process,
    // whose PID is still alive, the lease is what tells), runs it again (it is idempotent), and
    // its end is a notification.
    const second = processRuntime(false);
    let noticed = false;
    const notice = firstValueFrom(
      second.runtime
        .follow({ sessionId: SESSION })
        .pipe(filter(({ event }) => event.type === 'notification')),
    ).then(() => {
      noticed = true;
    });
    await second.runtime.ready;
    // A second of its clock at each look; the looks leave the SQLite writer's thread time to answer.
    await expect
      .poll(
        () => {
          if (!noticed) second.clock.increment(1_000);
          return noticed;
        },
        { timeout: 20_000, interval: 10 },
      )
      .toBe(true);
    await notice;
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
