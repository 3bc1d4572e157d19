import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  promoteWhenStarted,
  RESTART_BUDGET_MS,
  recoveredAndNotified,
  restartingRuntime,
} from '@baton/test-support';
import { afterAll, describe, expect, it } from 'vitest';
import { agentServer, frontEnd } from './front-end.js';

const dir = mkdtempSync(join(tmpdir(), 'baton-ag-ui-restart-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('@baton/ag-ui across a restart of the agent on SQLite between the acknowledgement and the end', () => {
  it('gives the result once, in the next run of the thread on the next process', async () => {
    const path = join(dir, 'baton.db');
    const before = restartingRuntime(path, true);
    const firstServer = await agentServer(before.runtime);
    const ui = frontEnd(firstServer.url);
    const running = ui.run({ call: { tool: 'research', args: { topic: 'tides' }, id: 'tool-r' } });
    await promoteWhenStarted(before, 'thread-1/tool-r', RESTART_BUDGET_MS);
    await running;
    expect(ui.activity('tool-r')?.content).toMatchObject({ status: 'backgrounded' });
    await firstServer.close();
    await before.runtime.close();

    const after = restartingRuntime(path, false);
    const secondServer = await agentServer(after.runtime);
    try {
      ui.agent.url = secondServer.url;
      await recoveredAndNotified(after, 'thread-1');
      await ui.run({});
      await ui.run({});
      const results = ui.resultsOf('tool-r').map((result) => result.content);
      expect(results).toHaveLength(2);
      expect(results[1]).toContain('tides: high at noon');
      expect(ui.activity('tool-r')?.content).toMatchObject({ status: 'succeeded' });
      expect(await after.runtime.notifications.count({ sessionId: 'thread-1', status: 'queued' })).toBe(0);
    } finally {
      await secondServer.close();
      await after.runtime.close();
    }
  }, 30_000);
});
