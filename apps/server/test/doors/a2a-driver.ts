import type { CallerName, DoorDriver, DoorTool, Outcome } from './door-suite.js';
import { outcomeOfStatus } from './rest-driver.js';
import { ARGS, type World } from './world.js';

interface Answer {
  result?: {
    task?: { id: string; status?: { state?: string; message?: { parts?: Array<{ text?: string }> } } };
  } & {
    id?: string;
    status?: { state?: string; message?: { parts?: Array<{ text?: string }> } };
  };
  error?: { code: number; message: string };
}

/** A task's answer as an outcome: refused for the scope or the quota in its status's words. */
function outcomeOf(answer: Answer): Outcome {
  if (answer.error) {
    if (/not found/i.test(answer.error.message)) return 'not_found';
    throw new Error(`an error no outcome reads: ${JSON.stringify(answer.error)}`);
  }
  const task = answer.result?.task ?? answer.result;
  const state = task?.status?.state;
  const words = task?.status?.message?.parts?.[0]?.text ?? '';
  if (
    state === 'TASK_STATE_REJECTED' ||
    (state === 'TASK_STATE_INPUT_REQUIRED' && /needs the scope/.test(words))
  ) {
    if (/needs the scope/.test(words)) return 'forbidden';
    if (/calls a minute|notifications not yet acknowledged/.test(words)) return 'over_quota';
    throw new Error(`a rejection no outcome reads: ${words}`);
  }
  return 'allowed';
}

/** A2A v1.0 JSON-RPC at /a2a: a skill's task, GetTask, CancelTask, and the answer to a task's approval. */
export function a2aDriver(world: World): DoorDriver {
  let id = 0;
  const rpc = async (caller: CallerName, method: string, params: unknown) => {
    const response = await fetch(`${world.base}/a2a`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${world.tokenOf(caller)}`,
        'content-type': 'application/json',
        'a2a-version': '1.0',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: ++id, method, params }),
    });
    if (response.status !== 200) return { outcome: outcomeOfStatus(response.status), answer: {} as Answer };
    const answer = (await response.json()) as Answer;
    return { outcome: outcomeOf(answer), answer };
  };
  const message = (data: object, taskId = '') => ({
    message: { messageId: crypto.randomUUID(), role: 'ROLE_USER', taskId, parts: [{ data }] },
  });
  return {
    async start(caller, tool: DoorTool) {
      const { outcome, answer } = await rpc(
        caller,
        'SendMessage',
        message({ skill: tool, arguments: ARGS[tool] }),
      );
      const taskId = answer.result?.task?.id;
      return outcome === 'allowed' && taskId !== undefined ? { outcome, callId: taskId } : { outcome };
    },
    cancel: async (caller, callId) => (await rpc(caller, 'CancelTask', { id: callId })).outcome,
    read: async (caller, callId) => (await rpc(caller, 'GetTask', { id: callId })).outcome,
    approve: async (caller, callId) =>
      (await rpc(caller, 'SendMessage', message({ approved: true }, callId))).outcome,
  };
}
