import { TaskState } from '@a2a-js/sdk';
import { AGENT_BUDGET_MS, agentLoopRuntime, eventually, nextStart } from '@baton/test-support';
import { afterEach, describe, expect, it } from 'vitest';
import { agentServer, artifactText, send, skillMessage } from './agent-server.js';

const closing: (() => unknown)[] = [];
afterEach(async () => {
  for (const close of closing.splice(0)) await close();
});

const listed = async (client: Awaited<ReturnType<typeof agentServer>>['client']) =>
  (
    await client.listTasks({
      tenant: '',
      contextId: '',
      status: TaskState.TASK_STATE_UNSPECIFIED,
      pageToken: '',
      statusTimestampAfter: undefined,
    })
  ).tasks.map((task) => task.id);

/** An agent under `acme/` whose `research` task was answered working. */
async function workingTask() {
  const suite = agentLoopRuntime();
  const acme = await agentServer(suite.runtime, { prefix: 'acme/' });
  closing.push(() => suite.runtime.close(), acme.close);
  const started = nextStart(suite.runtime);
  const answering = send(acme.client, skillMessage('research', { topic: 'tides' }));
  await started;
  suite.clock.increment(AGENT_BUDGET_MS);
  const task = await answering;
  expect(task.status?.state).toBe(TaskState.TASK_STATE_WORKING);
  return { suite, acme, task };
}

describe('@baton/a2a under a prefix: one runtime, an agent per tenant', () => {
  it('keeps each agent’s tasks under its prefix: another agent neither gets nor lists them', async () => {
    const suite = agentLoopRuntime();
    const acme = await agentServer(suite.runtime, { prefix: 'acme/' });
    const globex = await agentServer(suite.runtime, { prefix: 'globex/' });
    closing.push(() => suite.runtime.close(), acme.close, globex.close);

    const task = await send(acme.client, skillMessage('look_up', { word: 'tide' }));
    expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(task.id).not.toContain('/');
    const record = await suite.runtime.get(`acme/${task.id}`);
    expect(record?.sessionId).toBe('acme/a2a:context-1');

    expect((await acme.client.getTask({ tenant: '', id: task.id })).status?.state).toBe(
      TaskState.TASK_STATE_COMPLETED,
    );
    await expect(globex.client.getTask({ tenant: '', id: task.id })).rejects.toThrow(/not found/i);
    expect(await listed(acme.client)).toEqual([task.id]);
    expect(await listed(globex.client)).toEqual([]);
  });

  it('brings a working task’s end to its own agent, under its own id', async () => {
    const { suite, acme, task } = await workingTask();
    suite.gateOf('tides').resolve('tides: high at noon');
    await eventually(
      async () =>
        (await suite.runtime.notifications.count({ sessionPrefix: 'acme/a2a:', status: 'queued' })) === 0,
      'its end is brought to the task',
    );
    const ended = await acme.client.getTask({ tenant: '', id: task.id });
    expect(ended.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(artifactText(ended)).toEqual(['tides: high at noon']);
  });

  it('cancels a working task’s call under its prefix', async () => {
    const { suite, acme, task } = await workingTask();
    const cancelled = await acme.client.cancelTask({ tenant: '', id: task.id, metadata: undefined });
    expect(cancelled.status?.state).toBe(TaskState.TASK_STATE_CANCELED);
    expect((await suite.runtime.get(`acme/${task.id}`))?.status).toBe('cancelled');
  });
});
