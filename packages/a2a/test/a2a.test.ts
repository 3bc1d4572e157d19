import { TaskState } from '@a2a-js/sdk';
import { AGENT_BUDGET_MS, agentLoopRuntime, eventually, nextStart } from '@baton/test-support';
import { afterEach, describe, expect, it } from 'vitest';
import { agentServer, artifactText, send, skillMessage } from './agent-server.js';

const closing: (() => unknown)[] = [];
afterEach(async () => {
  for (const close of closing.splice(0)) await close();
});

async function setUp() {
  const suite = agentLoopRuntime();
  const served = await agentServer(suite.runtime);
  closing.push(() => suite.runtime.close(), served.close);
  return { ...suite, ...served };
}

/** Sends a message whose call is moved past its budget once it started, as a blocking request. */
async function promoted(suite: Awaited<ReturnType<typeof setUp>>, topic: string) {
  const message = skillMessage('research', { topic });
  const started = nextStart(suite.runtime);
  const answer = send(suite.client, message);
  const callId = await started;
  suite.clock.increment(AGENT_BUDGET_MS);
  return { task: await answer, callId };
}

describe('@baton/a2a: the runtime’s tools as an A2A agent’s skills, with @a2a-js/sdk’s own client', () => {
  it('lists the tools as skills in its agent card', async () => {
    const { client } = await setUp();
    const card = await client.getAgentCard();
    expect(card.skills.map((skill) => skill.id)).toEqual(
      expect.arrayContaining(['research', 'look_up', 'delete_file']),
    );
  });

  it('answers a fast call within its budget as a completed task, its result an artifact', async () => {
    const { client, runtime } = await setUp();
    const task = await send(client, skillMessage('look_up', { word: 'tide' }));
    expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(artifactText(task)).toEqual(['tide: a word']);
    expect((await runtime.get(task.id))?.status).toBe('succeeded');
  });

  it('answers a call past its budget as a working task though the client asked to block, and GetTask gives its end', async () => {
    const suite = await setUp();
    const { task, callId } = await promoted(suite, 'tides');
    expect(task.id).toBe(callId);
    expect(task.status?.state).toBe(TaskState.TASK_STATE_WORKING);
    expect(task.status?.message?.parts[0]?.content).toMatchObject({
      value: expect.stringMatching(/continuing in the background/),
    });

    suite.gateOf('tides').resolve('tides: high at noon');
    await eventually(async () => (await suite.runtime.get(callId))?.status === 'succeeded', 'the call ends');
    const ended = await suite.client.getTask({ tenant: '', id: task.id });
    expect(ended.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(artifactText(ended)).toEqual(['tides: high at noon']);
    const { tasks } = await suite.client.listTasks({
      tenant: '',
      contextId: 'context-1',
      status: TaskState.TASK_STATE_UNSPECIFIED,
      pageToken: '',
      statusTimestampAfter: undefined,
    });
    expect(tasks.map((each) => [each.id, each.status?.state])).toEqual([
      [task.id, TaskState.TASK_STATE_COMPLETED],
    ]);
    await eventually(
      async () =>
        (await suite.runtime.notifications.count({ sessionId: 'a2a:context-1', status: 'queued' })) === 0,
      'its end is brought to the task once',
    );
  });

  it('streams a working task’s end to SubscribeToTask once its call ends', async () => {
    const suite = await setUp();
    const { task } = await promoted(suite, 'waves');
    const seen: number[] = [];
    const following = (async () => {
      for await (const response of suite.client.resubscribeTask({ tenant: '', id: task.id })) {
        const payload = response.payload;
        if (payload?.$case === 'statusUpdate') seen.push(payload.value.status?.state ?? 0);
        if (payload?.$case === 'task') seen.push(payload.value.status?.state ?? 0);
      }
    })();
    await eventually(() => seen.length > 0, 'the subscriber has the task');
    suite.gateOf('waves').resolve('waves: calm');
    await following;
    expect(seen).toEqual([TaskState.TASK_STATE_WORKING, TaskState.TASK_STATE_COMPLETED]);
  });

  it('ends a SendStreamingMessage stream at working once the call goes to the background; SubscribeToTask follows it to its end', async () => {
    const suite = await setUp();
    const started = nextStart(suite.runtime);
    const streamed: number[] = [];
    let taskId = '';
    const streaming = (async () => {
      for await (const response of suite.client.sendMessageStream({
        tenant: '',
        message: skillMessage('research', { topic: 'currents' }),
        configuration: {
          acceptedOutputModes: [],
          taskPushNotificationConfig: undefined,
          returnImmediately: false,
        },
        metadata: undefined,
      })) {
        const payload = response.payload;
        if (payload?.$case === 'task') {
          taskId = payload.value.id;
          streamed.push(payload.value.status?.state ?? 0);
        }
        if (payload?.$case === 'statusUpdate') {
          taskId = payload.value.taskId;
          streamed.push(payload.value.status?.state ?? 0);
        }
      }
    })();
    await started;
    suite.clock.increment(AGENT_BUDGET_MS);
    // The stream ended with the task working, before the call did.
    await streaming;
    expect(streamed.at(-1)).toBe(TaskState.TASK_STATE_WORKING);
    const seen: number[] = [];
    const following = (async () => {
      for await (const response of suite.client.resubscribeTask({ tenant: '', id: taskId })) {
        const payload = response.payload;
        if (payload?.$case === 'statusUpdate') seen.push(payload.value.status?.state ?? 0);
        if (payload?.$case === 'task') seen.push(payload.value.status?.state ?? 0);
      }
    })();
    await eventually(() => seen.length > 0, 'the subscriber has the task');
    suite.gateOf('currents').resolve('currents: strong');
    await following;
    expect(seen.at(-1)).toBe(TaskState.TASK_STATE_COMPLETED);
  });

  it('cancels a task whose call is in the background', async () => {
    const suite = await setUp();
    const { task, callId } = await promoted(suite, 'storms');
    const cancelled = await suite.client.cancelTask({ tenant: '', id: task.id, metadata: undefined });
    expect(cancelled.status?.state).toBe(TaskState.TASK_STATE_CANCELED);
    expect((await suite.runtime.get(callId))?.status).toBe('cancelled');
  });

  it('rejects a message that names no skill, in words that say what to send', async () => {
    const { client } = await setUp();
    const message = skillMessage('research', {});
    message.parts = [
      { content: { $case: 'text', value: 'hello' }, metadata: undefined, filename: '', mediaType: '' },
    ];
    const task = await send(client, message);
    expect(task.status?.state).toBe(TaskState.TASK_STATE_REJECTED);
    expect(task.status?.message?.parts[0]?.content).toMatchObject({
      value: expect.stringContaining('"skill"'),
    });
  });

  it('asks for the approval of a call that needs one (input required), and runs it once the user approves in the task', async () => {
    const { client, runtime } = await setUp();
    const asked = await send(client, skillMessage('delete_file', { path: 'a.txt' }));
    expect(asked.status?.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
    expect((await runtime.get(asked.id))?.approval).toBe('pending');
    const answer = skillMessage('delete_file', {});
    answer.taskId = asked.id;
    answer.parts = [
      {
        content: { $case: 'data', value: { approved: true } },
        metadata: undefined,
        filename: '',
        mediaType: '',
      },
    ];
    const done = await send(client, answer);
    expect(done.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(artifactText(done)).toEqual(['deleted a.txt']);
    expect((await runtime.get(asked.id))?.approval).toBe('approved');
  });
});
