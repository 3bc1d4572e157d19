import { EventEmitter } from 'node:events';
import { defineTool } from '@baton/contracts';
import { createRuntime, type Runtime } from '@baton/runtime';
import { type Deferred, deferred, memoryStore, SimulatedClock } from '@baton/runtime/testing';
import { voice } from '@livekit/agents';
import { filter, firstValueFrom } from 'rxjs';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { batonLiveKitResults, type LiveKitSession } from '../src/index.js';

const SESSION = 'call-room-1';

/**
 * The states a session passes through while audio plays, which a session without a room does not
 * reach (the user speaking, the agent mid-sentence): a stand-in with the session's events, that
 * records what the bridge asks of it.
 */
class SpeakingSession extends EventEmitter {
  agentState: voice.AgentState = 'listening';
  userState: voice.UserState = 'listening';
  readonly asked: string[] = [];
  interrupt() {
    this.asked.push('interrupt');
    this.agentState = 'listening';
    return Promise.resolve();
  }
  generateReply({ userInput }: { userInput: string }) {
    this.asked.push(`reply: ${userInput.split('\n')[0]}`);
  }
  set(state: { agent?: voice.AgentState; user?: voice.UserState }) {
    const oldAgent = this.agentState;
    const oldUser = this.userState;
    if (state.agent) this.agentState = state.agent;
    if (state.user) this.userState = state.user;
    if (state.agent)
      this.emit(voice.AgentSessionEventTypes.AgentStateChanged, {
        oldState: oldAgent,
        newState: state.agent,
      });
    if (state.user)
      this.emit(voice.AgentSessionEventTypes.UserStateChanged, { oldState: oldUser, newState: state.user });
  }
}

const opened: Runtime[] = [];
afterEach(async () => {
  await Promise.all(opened.splice(0).map((runtime) => runtime.close()));
});

async function backgrounded(scheduling: 'interrupt' | 'when_idle') {
  const gate: Deferred<string> = deferred<string>();
  const clock = new SimulatedClock();
  const runtime = createRuntime({
    tools: [
      defineTool({
        name: 'research',
        description: 'Researches a topic; takes minutes',
        input: z.object({ topic: z.string() }),
        execution: { mode: 'auto', scheduling },
        execute: () => gate.promise,
      }),
    ],
    store: memoryStore(),
    clock,
    inlineBudgetMs: 300,
  });
  opened.push(runtime);
  const started = firstValueFrom(runtime.events$.pipe(filter((event) => event.type === 'started')));
  const reply = runtime.call({
    name: 'research',
    args: { topic: 'tides' },
    sessionId: SESSION,
    callId: 'call-1',
  });
  await started;
  clock.increment(300);
  expect((await reply).status).toBe('backgrounded');
  const session = new SpeakingSession();
  const results = batonLiveKitResults(runtime, session as unknown as LiveKitSession, { sessionId: SESSION });
  const ended = async () => {
    const notice = firstValueFrom(runtime.events$.pipe(filter((event) => event.type === 'notification')));
    gate.resolve('tides: high at noon');
    await notice;
  };
  return { runtime, session, results, ended };
}

describe('the result scheduling in a voice session', () => {
  it('interrupt: stops the agent mid-sentence, then has it speak the result', async () => {
    const { runtime, session, results, ended } = await backgrounded('interrupt');
    session.set({ agent: 'speaking' });
    await ended();
    await expect
      .poll(() => session.asked)
      .toEqual(['interrupt', 'reply: Task completed: Background tool: research']);
    expect((await runtime.notifications.list({ sessionId: SESSION }))[0]?.status).toBe('acknowledged');
    results.close();
  });

  it('when_idle: waits while the user speaks and the agent answers, then speaks the result once', async () => {
    const { runtime, session, results, ended } = await backgrounded('when_idle');
    session.set({ user: 'speaking' });
    await ended();
    await expect
      .poll(async () => (await runtime.notifications.list({ sessionId: SESSION }))[0]?.status)
      .toBe('queued');
    session.set({ user: 'listening', agent: 'thinking' });
    session.set({ agent: 'speaking' });
    expect(session.asked).toEqual([]);
    session.set({ agent: 'listening' });
    await expect.poll(() => session.asked).toEqual(['reply: Task completed: Background tool: research']);
    session.set({ agent: 'speaking' });
    session.set({ agent: 'listening' });
    expect(session.asked).toHaveLength(1);
    expect((await runtime.notifications.list({ sessionId: SESSION }))[0]?.status).toBe('acknowledged');
    results.close();
  });
});
