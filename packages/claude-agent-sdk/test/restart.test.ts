import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { recoveredAndNotified, restartingRuntime } from '@baton/test-support';
import { filter, firstValueFrom } from 'rxjs';
import { afterAll, describe, expect, it } from 'vitest';
import { asker, SESSION } from './ask.js';
import { type AnswerBlock, lastMessageText, MessagesStandIn } from './messages-stand-in.js';

const dir = mkdtempSync(join(tmpdir(), 'baton-claude-restart-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('a Claude Agent SDK conversation across a restart of the Baton runtime (SQLite)', () => {
  it('is acknowledged before the restart, and the result reaches the model once after it', async () => {
    let answering: (request: Parameters<typeof lastMessageText>[0]) => AnswerBlock[] = (request) =>
      lastMessageText(request).includes('tool_result')
        ? [{ type: 'text', text: 'It goes on in the background.' }]
        : [{ type: 'tool_use', id: 'toolu_1', name: 'mcp__baton__research', input: { topic: 'tides' } }];
    const standIn = await MessagesStandIn.start((request) => answering(request));
    try {
      const first = restartingRuntime(join(dir, 'baton.db'), true);
      const promoted = firstValueFrom(
        first.runtime.events$.pipe(filter((event) => event.type === 'started')),
      ).then(() => first.clock.increment(300));
      const before = await asker(first.runtime, standIn.url, dir)('Research the tides.');
      await promoted;
      expect(before.result).toMatchObject({ result: 'It goes on in the background.' });
      const [call] = (await first.runtime.list({ sessionId: SESSION })).calls;
      expect(call?.status).toBe('backgrounded');
      await first.runtime.close();

      // The next runtime recovers the call, runs it again (it is idempotent), and its end is a notification.
      const second = restartingRuntime(join(dir, 'baton.db'), false);
      await recoveredAndNotified(second, SESSION);
      const ask = asker(second.runtime, standIn.url, dir);
      const mentions = () =>
        JSON.stringify(standIn.requests.at(-1)?.messages ?? []).split('tides: high at noon').length - 1;
      answering = () => [{ type: 'text', text: 'High tide is at noon.' }];
      const after = await ask('So?', { resume: before.sessionId });
      expect(after.result).toMatchObject({ result: 'High tide is at noon.' });
      expect(mentions()).toBe(1);
      answering = () => [{ type: 'text', text: 'Nothing new.' }];
      await ask('Anything else?', { resume: after.sessionId });
      expect(mentions()).toBe(1);
      expect(await second.runtime.get(call?.callId ?? '')).toMatchObject({ status: 'succeeded' });
      await second.runtime.close();
    } finally {
      await standIn.close();
    }
  }, 60_000);
});
