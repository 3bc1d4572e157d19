import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Runtime } from '@baton/runtime';
import { recoveredAndNotified, restartingRuntime } from '@baton/test-support';
import { type Event, InMemorySessionService, LlmAgent, Runner } from '@google/adk';
import { filter, firstValueFrom } from 'rxjs';
import { afterAll, describe, expect, it } from 'vitest';
import { batonAdkResults, batonAdkTools } from '../src/index.js';
import { callFunction, ScriptedLlm, say } from './scripted-llm.js';

const dir = mkdtempSync(join(tmpdir(), 'baton-adk-restart-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const USER = 'ada';

const drain = async (events: AsyncIterable<Event>) => {
  const all: Event[] = [];
  for await (const event of events) all.push(event);
  return all;
};

describe('an ADK agent across a restart of the Baton runtime (SQLite)', () => {
  it('is acknowledged before the restart, and the result reaches the model once after it', async () => {
    // The ADK sessions outlive the Baton runtime, as a database's would.
    const sessions = new InMemorySessionService();
    const runnerOn = (runtime: Runtime, model: ScriptedLlm) => {
      return new Runner({
        agent: new LlmAgent({
          name: 'assistant',
          model,
          instruction: 'Help.',
          tools: batonAdkTools(runtime),
        }),
        appName: 'baton-adk-restart',
        sessionService: sessions,
      });
    };
    const session = await sessions.createSession({ appName: 'baton-adk-restart', userId: USER });

    const first = restartingRuntime(join(dir, 'baton.db'), true);
    const before = new ScriptedLlm([
      callFunction('call-1', 'research', { topic: 'tides' }),
      say('It goes on in the background.'),
    ]);
    const promoted = firstValueFrom(
      first.runtime.events$.pipe(filter((event) => event.type === 'started')),
    ).then(() => first.clock.increment(300));
    await drain(
      runnerOn(first.runtime, before).runAsync({
        userId: USER,
        sessionId: session.id,
        newMessage: { role: 'user', parts: [{ text: 'Research the tides.' }] },
      }),
    );
    await promoted;
    expect((await first.runtime.get('call-1'))?.status).toBe('backgrounded');
    await first.runtime.close();

    // The next runtime recovers the call, runs it again (it is idempotent), and its end is a notification.
    const second = restartingRuntime(join(dir, 'baton.db'), false);
    await recoveredAndNotified(second, session.id);
    const after = new ScriptedLlm([say('High tide is at noon.'), say('Nothing new.')]);
    const runner = runnerOn(second.runtime, after);
    const results = () =>
      drain(batonAdkResults(second.runtime, runner, { userId: USER, sessionId: session.id }));
    const delivered = await results();
    expect(delivered.at(-1)?.content?.parts?.[0]?.text).toBe('High tide is at noon.');
    expect(await results()).toEqual([]);
    await drain(
      runner.runAsync({
        userId: USER,
        sessionId: session.id,
        newMessage: { role: 'user', parts: [{ text: 'Anything else?' }] },
      }),
    );
    const responses = (request: number) =>
      (after.requests[request] ?? [])
        .flatMap((content) => content.parts ?? [])
        .flatMap((part) => part.functionResponse ?? []);
    const result = {
      id: 'call-1',
      name: 'research',
      response: { output: expect.objectContaining({ result: 'tides: high at noon' }) },
    };
    expect(responses(0)).toEqual([result]);
    expect(responses(1)).toEqual([result]);
    expect(await second.runtime.get('call-1')).toMatchObject({ status: 'succeeded' });
    await second.runtime.close();
  }, 30_000);
});
