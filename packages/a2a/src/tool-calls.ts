import { TaskState } from '@a2a-js/sdk';
import type { RequestContext } from '@a2a-js/sdk/server';
import { AgentEvent, type ExecutionEventBus } from '@a2a-js/sdk/server';
import { type CallReply, replyText } from '@baton/contracts';
import type { Runtime } from '@baton/runtime';
import { bridgeCall, type FrameworkCall, type PullDelivery, pullDelivery } from '@baton/runtime/bridge';
import { agentMessage, dataPart } from './tasks.js';

/**
 * Where the tool calls of an A2A agent of one's own are kept: the session of their A2A context,
 * apart from the `a2a:` sessions of the tasks that are Baton calls (`batonA2aAgent`).
 */
export const AGENT_SESSION_PREFIX = 'a2a-agent:';
export const agentSessionOf = (contextId: string) => `${AGENT_SESSION_PREFIX}${contextId}`;

/** A model's tool call, as the agent's loop hands it over. */
export type TaskToolCall = Omit<FrameworkCall, 'sessionId'>;

/**
 * The tool calls of an A2A agent's own model in one task, run by Baton, and the results of those
 * that went on past their budget, for the model's next step in the same context.
 */
export interface TaskToolCalls {
  /** The Baton session of the task's context. */
  readonly sessionId: string;
  /**
   * Runs the model's tool call as a Baton call of the context (the model's own id is the call's,
   * so a step run again is the same call) and tells the task: a `working` status whose message
   * has the reply's text and a data part `{ toolCall: { id, name, status } }`. Past its budget the
   * reply is the acknowledgement (`backgrounded`), the model's to read, and the call goes on.
   */
  call(call: TaskToolCall): Promise<CallReply>;
  /**
   * The context's results that came in the background, for the model at this step (a message of
   * a later task in the context). Each is held for this runtime until `confirm` (the model has
   * it: never given again) or `release` (the step failed: due again), as the bridge kit's pull
   * delivery holds them: a process that dies meanwhile lets them go.
   */
  readonly delivery: PullDelivery;
}

/**
 * For an A2A agent whose executor runs a model of its own: the model's tool calls through Baton,
 * in the session of the task's context. A task does not wait for a call past its budget (its
 * answer is the model's, with the acknowledgement to read); the call's end comes to the context's
 * next task, by `delivery`, once, wherever the call ended.
 */
export function taskToolCalls(
  runtime: Pick<Runtime, 'call' | 'notifications'>,
  context: Pick<RequestContext, 'taskId' | 'contextId'>,
  bus: Pick<ExecutionEventBus, 'publish'>,
): TaskToolCalls {
  const sessionId = agentSessionOf(context.contextId);
  const task = { id: context.taskId, contextId: context.contextId };
  return {
    sessionId,
    delivery: pullDelivery(runtime, { sessionId }),
    async call(call) {
      const reply = await bridgeCall(runtime, { ...call, sessionId });
      const message = agentMessage(task, replyText(reply).text);
      message.parts.push(dataPart({ toolCall: { id: reply.callId, name: call.name, status: reply.status } }));
      bus.publish(
        AgentEvent.statusUpdate({
          taskId: task.id,
          contextId: task.contextId,
          status: { state: TaskState.TASK_STATE_WORKING, message, timestamp: new Date().toISOString() },
          metadata: undefined,
        }),
      );
      return reply;
    },
  };
}
