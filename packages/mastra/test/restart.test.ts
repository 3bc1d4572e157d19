import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Runtime } from '@baton/runtime';
import { recoveredAndNotified, restartingRuntime } from '@baton/test-support';
import { Agent } from '@mastra/core/agent';
import { filter, firstValueFrom } from 'rxjs';
import { afterAll, describe, expect, it } from 'vitest';
import { batonMastraTools, batonNotificationsProcessor } from '../src/index.js';
import { callTool, type ScriptedAnswer, say, scriptedModel, shown } from './scripted-model.js';

const dir = mkdtempSync(join(tmpdir(), 'baton-mastra-restart-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const SESSION = 'chat-1';

const agentOn = (runtime: Runtime, script: ScriptedAnswer[]) => {
  const { model, prompts } = scriptedModel(script);
  const agent = new Agent({
    id: 'assistant',
    name: 'assistant',
    instructions: 'Help.',
    model,
    tools: batonMastraTools(runtime, { sessionId: SESSION }),
    inputProcessors: [batonNotificationsProcessor(runtime, { sessionId: SESSION })],
  });
  return { agent, prompts };
};

describe('a Mastra agent across a restart of the Baton runtime (SQLite)', () => {
  it('is acknowledged before the restart, and the result reaches the model once after it', async () => {
    const first = restartingRuntime(join(dir, 'baton.db'), true);
    const before = agentOn(first.runtime, [
      callTool('call-1', 'research', { topic: 'tides' }),
      say('It goes on in the background.'),
    ]);
    const promoted = firstValueFrom(
      first.runtime.events$.pipe(filter((event) => event.type === 'started')),
    ).then(() => first.clock.increment(300));
    const turn = await before.agent.generate('Research the tides.');
    await promoted;
    expect((await first.runtime.get('call-1'))?.status).toBe('backgrounded');
    await first.runtime.close();

    // The next runtime recovers the call, runs it again (it is idempotent), and its end is a notification.
    const second = restartingRuntime(join(dir, 'baton.db'), false);
    await recoveredAndNotified(second, SESSION);
    const after = agentOn(second.runtime, [say('High tide is at noon.'), say('Nothing new.')]);
    const next = await after.agent.generate([...turn.messages, { role: 'user', content: 'So?' }]);
    expect(next.text).toBe('High tide is at noon.');
    expect(shown(after.prompts[0]).split('tides: high at noon').length - 1).toBe(1);
    await after.agent.generate([...next.messages, { role: 'user', content: 'Anything else?' }]);
    expect(shown(after.prompts[1]).split('tides: high at noon').length - 1).toBe(1);
    expect(await second.runtime.get('call-1')).toMatchObject({ status: 'succeeded' });
    await second.runtime.close();
  }, 30_000);
});
