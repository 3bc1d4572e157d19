import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  eventually,
  promoteWhenStarted,
  RESTART_BUDGET_MS,
  recoveredAndNotified,
  restartingRuntime,
} from '@baton/test-support';
import { afterAll, describe, expect, it } from 'vitest';
import type { ResultsWhen } from '../src/index.js';
import { editorOf, scriptedAgent } from './editor.js';

const dir = mkdtempSync(join(tmpdir(), 'baton-acp-restart-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const endsOf = (reports: readonly { status?: string | null }[]) =>
  reports.filter((report) => report.status === 'completed' || report.status === 'failed').length;

describe('@baton/acp across a restart of the agent on SQLite between the acknowledgement and the end', () => {
  it.each<ResultsWhen>(['next_turn', 'when_idle'])(
    '%s: the session loaded again in the next process gets the end once',
    async (results) => {
      const path = join(dir, `${results}.db`);
      const before = restartingRuntime(path, true);
      const first = await editorOf(scriptedAgent(before.runtime, results));
      const sessionId = await first.newSession();
      const callId = `${sessionId}/tool-r`;
      const turn = first.prompt(sessionId, {
        call: { tool: 'research', args: { topic: 'tides' }, id: 'tool-r' },
      });
      await promoteWhenStarted(before, callId, RESTART_BUDGET_MS);
      await turn;
      expect(first.reportsOf('tool-r').at(-1)).toMatchObject({ status: 'in_progress' });
      first.close();
      await before.runtime.close();

      const after = restartingRuntime(path, false);
      const second = await editorOf(scriptedAgent(after.runtime, results));
      try {
        await second.loadSession(sessionId);
        await recoveredAndNotified(after, sessionId);
        if (results === 'when_idle')
          await eventually(() => endsOf(second.reportsOf('tool-r')) === 1, 'the end is reported while idle');
        await second.prompt(sessionId, {});
        await second.prompt(sessionId, {});
        expect(endsOf(second.reportsOf('tool-r'))).toBe(1);
        expect(second.reportsOf('tool-r').at(-1)).toMatchObject({
          status: 'completed',
          rawOutput: 'tides: high at noon',
        });
        expect(second.said().filter((text) => text.startsWith('back: '))).toHaveLength(1);
        expect(await after.runtime.notifications.count({ sessionId, status: 'queued' })).toBe(0);
      } finally {
        second.close();
        await after.runtime.close();
      }
    },
    30_000,
  );
});
