import { TaskState } from '@a2a-js/sdk';
import { InMemoryPushNotificationStore } from '@a2a-js/sdk/server';
import { AGENT_BUDGET_MS, agentLoopRuntime, eventually, nextStart } from '@baton/test-support';
import { afterEach, describe, expect, it } from 'vitest';
import { PUSH_MESSAGES } from '../src/push.js';
import { agentServer, send, skillMessage } from './agent-server.js';
import { PUSH_WEBHOOKS, pushConfig, pushReceiver } from './push-receiver.js';

const closing: (() => unknown)[] = [];
afterEach(async () => {
  for (const close of closing.splice(0)) await close();
});

/** An agent with push notifications, its runtime's clock at real time (pushes carry signed timestamps). */
async function setUp() {
  const suite = agentLoopRuntime(() => [], PUSH_WEBHOOKS);
  suite.clock.set(Date.now());
  const served = await agentServer(suite.runtime, {
    pushNotificationStore: new InMemoryPushNotificationStore(),
  });
  const hook = await pushReceiver();
  closing.push(() => suite.runtime.close(), served.close, hook.close);
  return { ...suite, ...served, hook };
}

/** Sends a blocking message whose call goes past its budget once it started; gives the working task. */
async function promoted(
  suite: Awaited<ReturnType<typeof setUp>>,
  topic: string,
  config?: ReturnType<typeof pushConfig>,
) {
  const started = nextStart(suite.runtime);
  const answer = send(suite.client, skillMessage('research', { topic }), false, config);
  await started;
  suite.clock.increment(AGENT_BUDGET_MS);
  const task = await answer;
  expect(task.status?.state).toBe(TaskState.TASK_STATE_WORKING);
  return task;
}

describe('@baton/a2a push notifications: a task’s end POSTed to its configs by Baton’s webhooks', () => {
  it('offers push notifications in its agent card when it keeps configs', async () => {
    const { client } = await setUp();
    expect((await client.getAgentCard()).capabilities?.pushNotifications).toBe(true);
  });

  it('pushes the end of a working task to the config sent with its message, once, signed, with its token', async () => {
    const suite = await setUp();
    const task = await promoted(suite, 'tides', pushConfig(suite.hook.url, { token: 'tok-tides' }));
    expect(suite.hook.pushes).toEqual([]);

    suite.gateOf('tides').resolve('tides: high at noon');
    await eventually(() => suite.hook.pushes.length > 0, 'the end is pushed');
    await eventually(
      async () =>
        (await suite.runtime.notifications.count({ sessionId: 'a2a:context-1', status: 'queued' })) === 0,
      'the end is acknowledged once pushed',
    );
    await suite.runtime.webhooks.deliverDue();
    expect(suite.hook.pushes).toHaveLength(1);
    const [push] = suite.hook.pushes;
    expect(push?.headers['content-type']).toBe('application/a2a+json');
    expect(push?.headers['x-a2a-notification-token']).toBe('tok-tides');
    expect(push?.verified).toBeTruthy();
    const pushed = push?.response.payload;
    expect(pushed?.$case).toBe('task');
    if (pushed?.$case !== 'task') return;
    expect(pushed.value.id).toBe(task.id);
    expect(pushed.value.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(pushed.value.artifacts[0]?.parts[0]?.content).toEqual({
      $case: 'text',
      value: 'tides: high at noon',
    });
    // What the runtime shows of the delivery hides the token.
    const [delivery] = await suite.runtime.webhooks.list({ callId: task.id });
    expect(delivery?.destination?.headers?.['x-a2a-notification-token']).toBe('[redacted]');
  });

  it('pushes to a config created for the working task, with its authentication; the SDK’s config calls see it', async () => {
    const suite = await setUp();
    const task = await promoted(suite, 'waves');
    const created = await suite.client.createTaskPushNotificationConfig(
      pushConfig(suite.hook.url, {
        taskId: task.id,
        authentication: { scheme: 'Bearer', credentials: 'cred-1' },
      }),
    );
    expect(created.id).not.toBe('');
    const listed = await suite.client.listTaskPushNotificationConfig({
      tenant: '',
      taskId: task.id,
      pageSize: 10,
      pageToken: '',
    });
    expect(listed.configs.map((config) => config.url)).toEqual([suite.hook.url]);

    suite.gateOf('waves').resolve('waves: calm');
    await eventually(() => suite.hook.pushes.length > 0, 'the end is pushed');
    expect(suite.hook.pushes[0]?.headers.authorization).toBe('Bearer cred-1');
    expect(suite.hook.pushes[0]?.headers['webhook-id']).toMatch(new RegExp(`_${created.id}$`));
  });

  it('pushes nothing to a config deleted before the end, and the end is still acknowledged', async () => {
    const suite = await setUp();
    const task = await promoted(suite, 'storms');
    const created = await suite.client.createTaskPushNotificationConfig(
      pushConfig(suite.hook.url, { taskId: task.id }),
    );
    await suite.client.deleteTaskPushNotificationConfig({ tenant: '', taskId: task.id, id: created.id });
    suite.gateOf('storms').resolve('storms: none');
    await eventually(
      async () =>
        (await suite.runtime.notifications.count({ sessionId: 'a2a:context-1', status: 'queued' })) === 0,
      'the end is acknowledged',
    );
    expect(await suite.runtime.webhooks.list({ callId: task.id })).toEqual([]);
    expect(suite.hook.pushes).toEqual([]);
  });

  it('refuses a config whose url is not http(s), in words that say so', async () => {
    const suite = await setUp();
    const task = await promoted(suite, 'fog');
    await expect(
      suite.client.createTaskPushNotificationConfig(
        pushConfig('ftp://example.com/hook', { taskId: task.id }),
      ),
    ).rejects.toThrow(PUSH_MESSAGES.badUrl('ftp://example.com/hook'));
  });

  it('refuses, when it is given, a config whose url the webhooks’ rules refuse: 0.0.0.0 and [::] are this machine', async () => {
    const suite = agentLoopRuntime(() => [], {
      webhooks: { ...PUSH_WEBHOOKS.webhooks, allow: { loopback: false, private: true } },
    });
    suite.clock.set(Date.now());
    const served = await agentServer(suite.runtime, {
      pushNotificationStore: new InMemoryPushNotificationStore(),
    });
    closing.push(() => suite.runtime.close(), served.close);
    const task = await promoted({ ...suite, ...served, hook: undefined as never }, 'haze');
    for (const url of ['http://0.0.0.0:8080/hook', 'http://[::]:8080/hook', 'http://127.0.0.1:8080/hook']) {
      await expect(
        served.client.createTaskPushNotificationConfig(pushConfig(url, { taskId: task.id })),
      ).rejects.toThrow(/refused: .*loopback/);
    }
    // A private destination the rules allow is taken.
    await served.client.createTaskPushNotificationConfig(
      pushConfig('http://10.0.0.1:8080/hook', { taskId: task.id }),
    );
  });
});
