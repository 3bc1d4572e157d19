import {
  type Artifact,
  type Message,
  type Part,
  Role,
  type Task,
  TaskState,
  type TaskStatus,
} from '@a2a-js/sdk';
import { type CallRecord, type CallReply, type CallStatus, replyText } from '@baton/contracts';

/** Where a task's Baton call is kept: the session of its A2A context. */
export const SESSION_PREFIX = 'a2a:';

/**
 * How an agent's tasks are named in the runtime: the task's id is its call's, its context the
 * call's session, both under the agent's prefix (a tenant's `tenant/` on a shared server, so that
 * one tenant's ids never name another's calls).
 */
export class TaskNames {
  readonly sessionPrefix: string;

  constructor(readonly prefix = '') {
    this.sessionPrefix = `${prefix}${SESSION_PREFIX}`;
  }

  callIdOf(taskId: string): string {
    return this.prefix + taskId;
  }

  taskIdOf(callId: string): string {
    return callId.startsWith(this.prefix) ? callId.slice(this.prefix.length) : callId;
  }

  sessionOf(contextId: string): string {
    return this.sessionPrefix + contextId;
  }

  contextOf(sessionId: string): string {
    return sessionId.startsWith(this.sessionPrefix) ? sessionId.slice(this.sessionPrefix.length) : sessionId;
  }

  /** The task a call's record is of, by its names. */
  taskOf(record: Pick<CallRecord, 'callId' | 'sessionId'>): Pick<Task, 'id' | 'contextId'> {
    return { id: this.taskIdOf(record.callId), contextId: this.contextOf(record.sessionId) };
  }
}

const STATES: Record<CallStatus, TaskState> = {
  queued: TaskState.TASK_STATE_SUBMITTED,
  inline: TaskState.TASK_STATE_WORKING,
  backgrounded: TaskState.TASK_STATE_WORKING,
  succeeded: TaskState.TASK_STATE_COMPLETED,
  failed: TaskState.TASK_STATE_FAILED,
  cancelled: TaskState.TASK_STATE_CANCELED,
  timed_out: TaskState.TASK_STATE_FAILED,
};

/** The task's state for a call's status (a call waiting for its approval needs the user's input). */
export function stateOf(record: Pick<CallRecord, 'status' | 'approval'>): TaskState {
  if (record.approval === 'pending') return TaskState.TASK_STATE_INPUT_REQUIRED;
  return STATES[record.status];
}

export const isFinal = (state: TaskState) =>
  state === TaskState.TASK_STATE_COMPLETED ||
  state === TaskState.TASK_STATE_FAILED ||
  state === TaskState.TASK_STATE_CANCELED ||
  state === TaskState.TASK_STATE_REJECTED;

export const textPart = (text: string): Part => ({
  content: { $case: 'text', value: text },
  metadata: undefined,
  filename: '',
  mediaType: 'text/plain',
});
export const dataPart = (value: unknown): Part => ({
  content: { $case: 'data', value },
  metadata: undefined,
  filename: '',
  mediaType: 'application/json',
});

/** A message of the agent in the task, in words. */
export function agentMessage(task: Pick<Task, 'id' | 'contextId'>, text: string): Message {
  return {
    messageId: crypto.randomUUID(),
    contextId: task.contextId,
    taskId: task.id,
    role: Role.ROLE_AGENT,
    parts: [textPart(text)],
    metadata: undefined,
    extensions: [],
    referenceTaskIds: [],
  };
}

export function statusOf(task: Pick<Task, 'id' | 'contextId'>, state: TaskState, text?: string): TaskStatus {
  return {
    state,
    message: text === undefined ? undefined : agentMessage(task, text),
    timestamp: new Date().toISOString(),
  };
}

/**
 * The status of a task whose call went on past its budget: `working`, its message the
 * acknowledgement, marked so that the task store knows the call's end is the task's next state.
 */
export function backgroundedStatusOf(task: Pick<Task, 'id' | 'contextId'>, text: string): TaskStatus {
  const status = statusOf(task, TaskState.TASK_STATE_WORKING, text);
  if (status.message !== undefined) status.message.metadata = { [BATON_META]: { status: 'backgrounded' } };
  return status;
}

/** Where a task's messages say what Baton knows that A2A has no word for. */
export const BATON_META = 'baton';

/** Whether the task was last answered `working` because its call went on in the background. */
export const isBackgrounded = (task: Task) =>
  (task.status?.message?.metadata?.[BATON_META] as { status?: string } | undefined)?.status ===
  'backgrounded';

/** The result of a call as the task's one artifact: its output as data, and what a model reads of it. */
export function resultArtifact(taskId: string, output: unknown, text: string): Artifact {
  return {
    artifactId: `${taskId}-result`,
    name: 'result',
    description: 'The result of the tool call',
    parts: [textPart(text), ...(typeof output === 'string' ? [] : [dataPart(output ?? null)])],
    metadata: undefined,
    extensions: [],
  };
}

/** What an ended call's reply says, for its status message (a failure's error, a stop's reason). */
export const replyWords = (reply: CallReply) => replyText(reply).text;

/** The task of a call, as its record tells it: what a restarted agent knows of it. */
export function taskOfRecord(record: CallRecord, names = new TaskNames()): Task {
  const task = names.taskOf(record);
  const state = stateOf(record);
  const words =
    record.status === 'succeeded'
      ? undefined
      : (record.error?.message ??
        (record.approval === 'pending' ? 'The call waits for its approval.' : undefined));
  const text = typeof record.output === 'string' ? record.output : JSON.stringify(record.output ?? null);
  return {
    ...task,
    status: statusOf(task, state, words),
    artifacts: record.status === 'succeeded' ? [resultArtifact(task.id, record.output, text)] : [],
    history: [],
    metadata: { skill: record.toolName },
  };
}
