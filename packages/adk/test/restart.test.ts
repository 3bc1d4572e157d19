import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { defineTool } from '@baton/contracts';
import { createRuntime, type Runtime } from '@baton/runtime';
import { SimulatedClock } from '@baton/runtime/testing';
import { sqliteStore } from '@baton/store-sqlite';
import { type Event, InMemorySessionService, LlmAgent, Runner } from '@google/adk';
import { filter, firstValueFrom } from 'rxjs';
import { afterAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { batonAdkResults, batonAdkTools } from '../src/index.js';
import { callFunction, ScriptedLlm, say } from './scripted-llm.js';

const dir = mkdtempSync(join(tmpdir(), 'baton-adk-restart-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const USER = 'ada';

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

    const first = processRuntime(true);
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

    // The next runtime recovers the call once the first one's lease has lapsed (in this process,
    // whose PID is still alive, the lease is what tells), runs it again (it is idempotent), and
    // its end is a notification.
    const second = processRuntime(false);
    let noticed = false;
    const notice = firstValueFrom(
      second.runtime
        .follow({ sessionId: session.id })
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
