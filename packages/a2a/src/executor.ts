import { type Message, Role, type Task, TaskState } from '@a2a-js/sdk';
import {
  AgentEvent,
  type AgentExecutor,
  type ExecutionEventBus,
  type RequestContext,
  type User,
} from '@a2a-js/sdk/server';
import { type Caller, type CallReply, TRUSTED_CALLER } from '@baton/contracts';
import type { Runtime } from '@baton/runtime';
import { callAwaitingApproval, replyOf, runDecided } from '@baton/runtime/bridge';
import type { BatonEventBuses } from './buses.js';
import { redactedMessage } from './redaction.js';
import { backgroundedStatusOf, resultArtifact, statusOf, TaskNames } from './tasks.js';

/** What a message asks for: one of the agent's skills (a runtime's tool) with its arguments. */
export interface SkillCall {
  skill: string;
  arguments: unknown;
}

/**
 * The skill a message names: its first data part `{ skill, arguments }` (or `{ skill, args }`), or
 * a data part of arguments with the skill in the message's `metadata.skill`.
 */
export function skillCallOf(message: Message): SkillCall | undefined {
  for (const part of message.parts) {
    if (part.content?.$case !== 'data') continue;
    const value = part.content.value as Record<string, unknown> | null;
    if (value === null || typeof value !== 'object') continue;
    if (typeof value.skill === 'string')
      return { skill: value.skill, arguments: value.arguments ?? value.args ?? {} };
    const skill = message.metadata?.skill;
    if (typeof skill === 'string') return { skill, arguments: value };
  }
  return undefined;
}

/** A user's message that calls one of the agent's skills: the data part `skillCallOf` reads. */
export function skillMessage(skill: string, args: unknown, { contextId = '', taskId = '' } = {}): Message {
  return {
    messageId: crypto.randomUUID(),
    contextId,
    taskId,
    role: Role.ROLE_USER,
    parts: [
      {
        content: { $case: 'data', value: { skill, arguments: args } },
        metadata: undefined,
        filename: '',
        mediaType: '',
      },
    ],
    metadata: undefined,
    extensions: [],
    referenceTaskIds: [],
  };
}

/** The user's answer to a task that waits for its approval: a data part `{ approved, reason? }`. */
export function approvalOf(message: Message): { approved: boolean; reason?: string } | undefined {
  for (const part of message.parts) {
    if (part.content?.$case !== 'data') continue;
    const value = part.content.value as { approved?: unknown; reason?: unknown } | null;
    if (value === null || typeof value !== 'object' || typeof value.approved !== 'boolean') continue;
    return {
      approved: value.approved,
      ...(typeof value.reason === 'string' && value.reason !== '' ? { reason: value.reason } : {}),
    };
  }
  return undefined;
}

const ASKS_APPROVAL =
  'The call needs approval before it runs: answer in this task with a data part { "approved": true } (or false, with a "reason").';

const NAMES_NO_SKILL =
  'The message names no skill: send a data part { "skill": "<one of the agent card\'s skills>", "arguments": { ... } }.';

/** The task's end as its events: the result as an artifact, then the final status. */
export function endEvents(task: Pick<Task, 'id' | 'contextId'>, reply: CallReply, text: string) {
  const state =
    reply.status === 'succeeded'
      ? TaskState.TASK_STATE_COMPLETED
      : reply.status === 'cancelled'
        ? TaskState.TASK_STATE_CANCELED
        : TaskState.TASK_STATE_FAILED;
  return [
    ...(reply.status === 'succeeded'
      ? [
          AgentEvent.artifactUpdate({
            taskId: task.id,
            contextId: task.contextId,
            artifact: resultArtifact(task.id, reply.output, text),
            append: false,
            lastChunk: true,
            metadata: undefined,
          }),
        ]
      : []),
    AgentEvent.statusUpdate({
      taskId: task.id,
      contextId: task.contextId,
      status: statusOf(task, state, reply.status === 'succeeded' ? undefined : text),
      metadata: undefined,
    }),
  ];
}

/**
 * Who the caller is (the `User` the transport's `userBuilder` made), for the runtime to decide what
 * it may run: its scopes and its quota (`Runtime.access`). Undefined: the trusted caller.
 */
export type CallerOf = (user: User | undefined) => Caller | undefined;

/**
 * Each task a Baton call of the skill its message names, with the task's id as the call's and its
 * context as the call's session. Within the inline budget the task ends with the call (its result
 * an artifact); past it, the task is answered `working`, whether or not the client asked to block,
 * and the call goes on: its end comes to the task when it ends (`BatonA2aAgent`).
 */
export class BatonAgentExecutor implements AgentExecutor {
  readonly #runtime: Runtime;
  readonly #buses: Pick<BatonEventBuses, 'inBackground' | 'isInBackground' | 'ended'>;
  readonly #names: TaskNames;
  readonly #callerOf: CallerOf;

  constructor(
    runtime: Runtime,
    buses: Pick<BatonEventBuses, 'inBackground' | 'isInBackground' | 'ended'>,
    names = new TaskNames(),
    callerOf: CallerOf = () => undefined,
  ) {
    this.#runtime = runtime;
    this.#buses = buses;
    this.#names = names;
    this.#callerOf = callerOf;
  }

  /** The runtime's refusal of the caller for the skill (a tool its scopes do not allow), in words. */
  #refusal(skill: string, caller: Caller): string | undefined {
    return this.#runtime.access.scopeRefusal(caller, this.#runtime.tools.get(skill))?.message;
  }

  async execute(context: RequestContext, bus: ExecutionEventBus): Promise<void> {
    const { taskId, contextId } = context;
    // What the task keeps of the message, and gives back to whoever reads it: no secret argument.
    const userMessage = redactedMessage(context.userMessage, this.#runtime.tools);
    const caller = this.#callerOf(context.context?.user) ?? TRUSTED_CALLER;
    const task = { id: taskId, contextId };
    const status = (state: TaskState, text?: string) =>
      bus.publish(
        AgentEvent.statusUpdate({
          taskId,
          contextId,
          status: statusOf(task, state, text),
          metadata: undefined,
        }),
      );
    if (context.task !== undefined) {
      // A message in a task that waits for its approval: the user's decision.
      bus.publish(AgentEvent.task({ ...context.task, history: [...context.task.history, userMessage] }));
      const record = await this.#runtime.get(this.#names.callIdOf(taskId));
      const decision = approvalOf(userMessage);
      if (record?.approval !== 'pending' || decision === undefined) {
        status(TaskState.TASK_STATE_INPUT_REQUIRED, ASKS_APPROVAL);
        return;
      }
      // Deciding is running: a caller who may not run the tool leaves the task waiting for one who may.
      const refused = this.#refusal(record.toolName, caller);
      if (refused !== undefined) {
        status(TaskState.TASK_STATE_INPUT_REQUIRED, refused);
        return;
      }
      const request = {
        name: record.toolName,
        args: record.args,
        sessionId: record.sessionId,
        callId: record.callId,
      };
      status(TaskState.TASK_STATE_WORKING);
      this.#answer(task, bus, await runDecided(this.#runtime, request, decision));
      return;
    }
    const named = skillCallOf(context.userMessage);
    bus.publish(
      AgentEvent.task({
        ...task,
        status: statusOf(task, TaskState.TASK_STATE_SUBMITTED),
        artifacts: [],
        history: [userMessage],
        metadata: named === undefined ? undefined : { skill: named.skill },
      }),
    );
    if (named === undefined) {
      status(TaskState.TASK_STATE_REJECTED, NAMES_NO_SKILL);
      return;
    }
    // Asked of the runtime first, so that the task is rejected before it is said to work; the
    // runtime decides again when the call is made, and takes its quota.
    const refused = this.#refusal(named.skill, caller);
    if (refused !== undefined) {
      status(TaskState.TASK_STATE_REJECTED, refused);
      return;
    }
    status(TaskState.TASK_STATE_WORKING);
    const request = {
      name: named.skill,
      args: named.arguments,
      sessionId: this.#names.sessionOf(contextId),
      callId: this.#names.callIdOf(taskId),
      ...(caller.via === 'trusted' ? {} : { caller }),
    };
    const definition = this.#runtime.tools.definitions().find((tool) => tool.name === named.skill);
    if (definition?.execution.needsApproval !== undefined) {
      if (await callAwaitingApproval(this.#runtime, request)) {
        status(TaskState.TASK_STATE_INPUT_REQUIRED, ASKS_APPROVAL);
        return;
      }
      this.#answer(task, bus, await replyOf(this.#runtime, request));
      return;
    }
    this.#answer(task, bus, await this.#runtime.call(request));
  }

  /** The task's answer to a call's reply: its end, or `working` while the call goes on. */
  #answer(task: Pick<Task, 'id' | 'contextId'>, bus: ExecutionEventBus, reply: CallReply): void {
    const output = withTaskId(reply.output, task.id);
    const text =
      typeof output === 'string' ? output : (reply.error?.message ?? JSON.stringify(output ?? null));
    // Refused for the caller's rights (its quota): nothing was kept, and the task did not run.
    const code = reply.error?.code;
    if (code === 'quota_exceeded' || code === 'insufficient_scope') {
      bus.publish(
        AgentEvent.statusUpdate({
          taskId: task.id,
          contextId: task.contextId,
          status: statusOf(task, TaskState.TASK_STATE_REJECTED, reply.error?.message),
          metadata: undefined,
        }),
      );
      return;
    }
    if (reply.status !== 'backgrounded') {
      for (const event of endEvents(task, reply, text)) bus.publish(event);
      return;
    }
    // Answered now, whether or not the client asked to block: the call goes on past its budget.
    this.#buses.inBackground(task.id);
    bus.publish(
      AgentEvent.statusUpdate({
        taskId: task.id,
        contextId: task.contextId,
        status: backgroundedStatusOf(task, text),
        metadata: undefined,
      }),
    );
  }

  /**
   * Cancels the task's call. One still within its budget ends its own request with the task
   * `canceled`; one in the background is ended here, on the bus the cancel waits on.
   */
  async cancelTask(taskId: string): Promise<void> {
    const callId = this.#names.callIdOf(taskId);
    const cancelled = await this.#runtime.cancel(callId, 'the task was cancelled');
    if (!cancelled || !this.#buses.isInBackground(taskId)) return;
    const record = await this.#runtime.get(callId);
    const task = { id: taskId, contextId: this.#names.contextOf(record?.sessionId ?? '') };
    this.#buses.ended(taskId, (bus) =>
      bus.publish(
        AgentEvent.statusUpdate({
          taskId,
          contextId: task.contextId,
          status: statusOf(task, TaskState.TASK_STATE_CANCELED, 'the task was cancelled'),
          metadata: undefined,
        }),
      ),
    );
  }
}

/**
 * The acknowledgement names the call by the id the client knows it by, the task's: the runtime's
 * own id carries the tenant's prefix, which is not the client's to see.
 */
function withTaskId(output: unknown, taskId: string): unknown {
  if (typeof output !== 'object' || output === null || !('call_id' in output)) return output;
  return { ...output, call_id: taskId };
}
