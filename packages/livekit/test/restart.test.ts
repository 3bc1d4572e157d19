import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Runtime } from '@baton/runtime';
import { recoveredAndNotified, restartingRuntime } from '@baton/test-support';
import { initializeLogger, voice } from '@livekit/agents';
import { filter, firstValueFrom } from 'rxjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { batonLiveKitResults, batonLiveKitTools } from '../src/index.js';
import { callTool, type ScriptedAnswer, ScriptedLlm, say } from './scripted-llm.js';

const dir = mkdtempSync(join(tmpdir(), 'baton-livekit-restart-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
beforeAll(() => {
  initializeLogger({ pretty: false, level: 'silent' });
});

const SESSION = 'call-room-1';

/** A voice session with no room, on the runtime, its results put in by the bridge. */
async function voiceSession(runtime: Runtime, script: ScriptedAnswer[]) {
  const model = new ScriptedLlm(script);
  const agent = new voice.Agent({
    instructions: 'Help.',
    tools: batonLiveKitTools(runtime, { sessionId: SESSION }),
  });
  const session = new voice.AgentSession({ llm: model });
  await session.start({ agent });
  const results = batonLiveKitResults(runtime, session, { sessionId: SESSION });
  const said = () =>
    session.history.items.flatMap((item) =>
      item.type === 'message' && item.role === 'assistant' ? [item.textContent ?? ''] : [],
    );
  const close = async () => {
    results.close();
    await session.close();
  };
  return { model, session, said, close };
}

describe('a LiveKit voice session across a restart of the Baton runtime (SQLite)', () => {
  it('is acknowledged before the restart, and the result is spoken once in the next session after it', async () => {
    const first = restartingRuntime(join(dir, 'baton.db'), true);
    const before = await voiceSession(first.runtime, [
      callTool('call-1', 'research', { topic: 'tides' }),
      say('I am looking it up.'),
    ]);
    const promoted = firstValueFrom(
      first.runtime.events$.pipe(filter((event) => event.type === 'started')),
    ).then(() => first.clock.increment(300));
    await before.session.run({ userInput: 'When is high tide?' }).wait();
    await promoted;
    expect(before.said()).toEqual(['I am looking it up.']);
    expect((await first.runtime.get('call-1'))?.status).toBe('backgrounded');
    await before.close();
    await first.runtime.close();

    // The next runtime recovers the call, runs it again (it is idempotent), and its end is a notification.
    const second = restartingRuntime(join(dir, 'baton.db'), false);
    await recoveredAndNotified(second, SESSION);
    const after = await voiceSession(second.runtime, [say('High tide is at noon.'), say('Nothing new.')]);
    await expect.poll(() => after.said()).toEqual(['High tide is at noon.']);
    expect(after.model.requests[0]?.split('tides: high at noon').length).toBe(2);
    await after.session.run({ userInput: 'Anything else?' }).wait();
    expect(after.said()).toEqual(['High tide is at noon.', 'Nothing new.']);
    expect(after.model.requests[1]?.split('tides: high at noon').length).toBe(2);
    await after.close();
    await second.runtime.close();
  }, 30_000);
});
