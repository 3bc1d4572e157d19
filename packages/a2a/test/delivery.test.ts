/**
 * The A2A agent as a consumer of a call's end: what its follower brings to a task (an update, the
 * end) reaches the task's subscribers once each, an approval's end is the task's once, and nothing
 * of the call stays queued for another consumer of its session to give again.
 */
import { TaskState } from '@a2a-js/sdk';
import { defineTool } from '@baton/contracts';
import { AGENT_BUDGET_MS, agentLoopRuntime, eventually, nextStart } from '@baton/test-support';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { agentServer, artifactText, send, skillMessage } from './agent-server.js';

const closing: (() => unknown)[] = [];
afterEach(async () => {
  for (const close of closing.splice(0)) await close();
});

async function setUp() {
  const suite = agentLoopRuntime((gateOf) => [
    defineTool({
      name: 'build',
      description: 'Builds, and says how far it got',
      input: z.object({ target: z.string() }),
      execution: { mode: 'auto' },
      async execute({ target }, ctx) {
        await gateOf(`half:${target}`).promise;
        ctx.update(`${target}: half built`);
        return gateOf(target).promise;
      },
    }),
  ]);
  const served = await agentServer(suite.runtime);
  closing.push(() => suite.runtime.close(), served.close);
  return { ...suite, ...served };
}

const queued = (suite: Awaited<ReturnType<typeof setUp>>) =>
  suite.runtime.notifications.count({ sessionId: 'a2a:context-1', status: 'queued' });

/** A decision on a task that waits for its approval, as the user's message in the task. */
function decision(taskId: string, approved: boolean) {
  const answer = skillMessage('delete_file', {});
  answer.taskId = taskId;
  answer.parts = [
    { content: { $case: 'data', value: { approved } }, metadata: undefined, filename: '', mediaType: '' },
  ];
  return answer;
}

describe('@baton/a2a gives a call’s end once', () => {
  it('an update and the end reach a SubscribeToTask subscriber once each; nothing stays queued', async () => {
    const suite = await setUp();
    const started = nextStart(suite.runtime);
    const answering = send(suite.client, skillMessage('build', { target: 'app' }));
    await started;
    suite.clock.increment(AGENT_BUDGET_MS);
    const task = await answering;
    expect(task.status?.state).toBe(TaskState.TASK_STATE_WORKING);
    const said: string[] = [];
    let subscribed = false;
    const following = (async () => {
      for await (const response of suite.client.resubscribeTask({ tenant: '', id: task.id })) {
        const payload = response.payload;
        subscribed = true;
        if (payload?.$case !== 'statusUpdate') continue;
        const part = payload.value.status?.message?.parts[0]?.content;
        said.push(`${payload.value.status?.state}:${part?.$case === 'text' ? part.value : ''}`);
      }
    })();
    await eventually(() => subscribed, 'the subscriber has the task');
    suite.gateOf('half:app').resolve('');
    await eventually(() => said.some((each) => each.includes('app: half built')), 'the update is told');
    suite.gateOf('app').resolve('app: built');
    await following;
    expect(said.filter((each) => each.includes('app: half built'))).toHaveLength(1);
    expect(said.filter((each) => each.startsWith(`${TaskState.TASK_STATE_COMPLETED}:`))).toHaveLength(1);
    const ended = await suite.client.getTask({ tenant: '', id: task.id });
    expect(artifactText(ended)).toEqual(['app: built']);
    await eventually(async () => (await queued(suite)) === 0, 'nothing stays queued');
  });

  for (const approved of [true, false]) {
    it(`an approval ${approved ? 'approved' : 'rejected'}: the task's end once; nothing stays queued`, async () => {
      const suite = await setUp();
      const asked = await send(suite.client, skillMessage('delete_file', { path: 'a.txt' }));
      expect(asked.status?.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
      const done = await send(suite.client, decision(asked.id, approved));
      expect(done.status?.state).toBe(
        approved ? TaskState.TASK_STATE_COMPLETED : TaskState.TASK_STATE_FAILED,
      );
      if (approved) expect(artifactText(done)).toEqual(['deleted a.txt']);
      expect((await suite.runtime.get(asked.id))?.approval).toBe(approved ? 'approved' : 'rejected');
      await eventually(async () => (await queued(suite)) === 0, 'nothing stays queued');
      // Asked again, the task says the same end.
      const again = await suite.client.getTask({ tenant: '', id: asked.id });
      expect(again.status?.state).toBe(done.status?.state);
    });
  }
});
