import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TaskState } from '@a2a-js/sdk';
import { RESTART_BUDGET_MS, recoveredAndNotified, restartingRuntime } from '@baton/test-support';
import { afterAll, describe, expect, it } from 'vitest';
import { agentServer, artifactText, send, skillMessage } from './agent-server.js';

const dir = mkdtempSync(join(tmpdir(), 'baton-a2a-restart-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('@baton/a2a across a restart of the agent on SQLite between the answer and the end', () => {
  it('keeps the task: the next process brings it its end, and GetTask and ListTasks show it', async () => {
    const path = join(dir, 'baton.db');
    const before = restartingRuntime(path, true);
    const first = await agentServer(before.runtime);
    const started = new Promise<void>((resolve) => {
      const watching = before.runtime.events$.subscribe((event) => {
        if (event.type !== 'started') return;
        watching.unsubscribe();
        resolve();
      });
    });
    const answering = send(first.client, skillMessage('research', { topic: 'tides' }));
    await started;
    before.clock.increment(RESTART_BUDGET_MS);
    const task = await answering;
    expect(task.status?.state).toBe(TaskState.TASK_STATE_WORKING);
    await first.close();
    await before.runtime.close();

    const after = restartingRuntime(path, false);
    const second = await agentServer(after.runtime);
    try {
      await recoveredAndNotified(after, 'a2a:context-1');
      const ended = await second.client.getTask({ tenant: '', id: task.id });
      expect(ended.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
      expect(artifactText(ended)).toEqual(['tides: high at noon']);
      const { tasks } = await second.client.listTasks({
        tenant: '',
        contextId: 'context-1',
        status: TaskState.TASK_STATE_UNSPECIFIED,
        pageToken: '',
        statusTimestampAfter: undefined,
      });
      expect(tasks.map((each) => each.status?.state)).toEqual([TaskState.TASK_STATE_COMPLETED]);
    } finally {
      await second.close();
      await after.runtime.close();
    }
  }, 30_000);
});
