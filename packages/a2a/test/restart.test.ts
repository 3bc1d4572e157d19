import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TaskState } from '@a2a-js/sdk';
import { DatabasePushNotificationStore } from '@a2a-js/sdk/server/database';
import {
  eventually,
  nextStart,
  RESTART_BUDGET_MS,
  recoveredAndNotified,
  restartingRuntime,
} from '@baton/test-support';
import Database from 'better-sqlite3';
import { Kysely, SqliteDialect } from 'kysely';
import { afterAll, describe, expect, it } from 'vitest';
import { agentServer, artifactText, send, skillMessage } from './agent-server.js';
import { PUSH_WEBHOOKS, pushConfig, pushReceiver } from './push-receiver.js';

const dir = mkdtempSync(join(tmpdir(), 'baton-a2a-restart-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A process's push configs, in the SDK's database store on a SQLite file of their own. */
const pushStoreOn = (path: string) => {
  const db = new Kysely({ dialect: new SqliteDialect({ database: new Database(path) }) });
  return { store: new DatabasePushNotificationStore(db), close: () => db.destroy() };
};

/** Starts the first process and sends it a message whose call goes past its budget; gives the working task. */
async function workingTask(
  before: ReturnType<typeof restartingRuntime>,
  first: Awaited<ReturnType<typeof agentServer>>,
  config?: ReturnType<typeof pushConfig>,
) {
  const started = nextStart(before.runtime);
  const answering = send(first.client, skillMessage('research', { topic: 'tides' }), false, config);
  await started;
  before.clock.increment(RESTART_BUDGET_MS);
  const task = await answering;
  expect(task.status?.state).toBe(TaskState.TASK_STATE_WORKING);
  return task;
}

describe('@baton/a2a across a restart of the agent on SQLite between the answer and the end', () => {
  it('keeps the task: the next process brings it its end, and GetTask and ListTasks show it', async () => {
    const path = join(dir, 'baton.db');
    const before = restartingRuntime(path, true);
    const first = await agentServer(before.runtime);
    const task = await workingTask(before, first);
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

  it('pushes the end to the config the first process was given, once, from the SQLite-kept configs', async () => {
    const path = join(dir, 'baton-push.db');
    const pushPath = join(dir, 'pushes.db');
    // The SDK's own migration of its push config table: an operator's step, before the agent starts.
    execFileSync('npx', [
      '--no-install',
      'a2a-db',
      'upgrade',
      '--url',
      `sqlite:${pushPath}`,
      '--store',
      'push-notification-configs',
    ]);
    const hook = await pushReceiver();
    const before = restartingRuntime(path, true, PUSH_WEBHOOKS);
    before.clock.set(Date.now());
    const firstPushes = pushStoreOn(pushPath);
    const first = await agentServer(before.runtime, { pushNotificationStore: firstPushes.store });
    const task = await workingTask(before, first, pushConfig(hook.url, { token: 'tok-restart' }));
    await first.close();
    await before.runtime.close();
    await firstPushes.close();

    const after = restartingRuntime(path, false, PUSH_WEBHOOKS);
    after.clock.set(Date.now());
    const secondPushes = pushStoreOn(pushPath);
    const second = await agentServer(after.runtime, { pushNotificationStore: secondPushes.store });
    try {
      await recoveredAndNotified(after, 'a2a:context-1');
      await eventually(() => hook.pushes.length > 0, 'the end is pushed by the next process');
      await eventually(
        async () =>
          (await after.runtime.notifications.count({ sessionId: 'a2a:context-1', status: 'queued' })) === 0,
        'the end is acknowledged once pushed',
      );
      await after.runtime.webhooks.deliverDue();
      expect(hook.pushes).toHaveLength(1);
      const pushed = hook.pushes[0]?.response.payload;
      expect(pushed?.$case === 'task' && [pushed.value.id, pushed.value.status?.state]).toEqual([
        task.id,
        TaskState.TASK_STATE_COMPLETED,
      ]);
      expect(hook.pushes[0]?.headers['x-a2a-notification-token']).toBe('tok-restart');
      expect(hook.pushes[0]?.verified).toBeTruthy();
    } finally {
      await second.close();
      await after.runtime.close();
      await secondPushes.close();
      await hook.close();
    }
  }, 30_000);
});
