import type { ListTasksRequest, ListTasksResponse, Task } from '@a2a-js/sdk';
import type { TaskStore } from '@a2a-js/sdk/server';
import type { Runtime } from '@baton/runtime';
import { redactedTask } from './redaction.js';
import { isBackgrounded, isFinal, SESSION_PREFIX, stateOf, TaskNames, taskOfRecord } from './tasks.js';

/** The most tasks one `ListTasks` page gives. */
export const MAX_TASKS_PAGE = 100;

/**
 * The A2A tasks of Baton calls, kept by Baton's store: a task is its call (the same id), so it
 * survives a restart with the call, and its end is the call's, however the call ended (in this
 * process, another, or after a restart). What the SDK saves of a task (its history, its status
 * messages) is kept here in memory over the call's record; a task answered `working` while its call
 * went on shows the call's end once it has ended.
 */
export class BatonTaskStore implements TaskStore {
  readonly #runtime: Pick<Runtime, 'get' | 'list' | 'tools'>;
  /** What the SDK saved of each task this process served. */
  readonly #saved = new Map<string, Task>();
  readonly #names: TaskNames;

  constructor(runtime: Pick<Runtime, 'get' | 'list' | 'tools'>, names = new TaskNames()) {
    this.#runtime = runtime;
    this.#names = names;
  }

  /** Kept without the secret arguments its history may carry: a secret given is never read back. */
  async save(task: Task): Promise<void> {
    this.#saved.set(task.id, structuredClone(redactedTask(task, this.#runtime.tools)));
  }

  async load(taskId: string): Promise<Task | undefined> {
    const saved = this.#saved.get(taskId);
    const record = await this.#runtime.get(this.#names.callIdOf(taskId));
    if (record === undefined || !this.#isTask(record.sessionId)) return saved && structuredClone(saved);
    const fromRecord = taskOfRecord(record, this.#names);
    if (saved === undefined) return fromRecord;
    // The task was answered while its call went on: the call's end, wherever it ended, is the task's.
    const ended = isBackgrounded(saved) && isFinal(stateOf(record));
    return ended
      ? { ...structuredClone(saved), status: fromRecord.status, artifacts: fromRecord.artifacts }
      : structuredClone(saved);
  }

  /**
   * Whether a call of this session is an A2A task this agent may show: one of its own sessions,
   * or, for an agent over a whole tenant (`prefix` of the tenant), a task of one of its users
   * (`tenant/~user/a2a:…`), as the tenant's view of the API sees every user's calls.
   */
  #isTask(sessionId: string): boolean {
    if (sessionId.startsWith(this.#names.sessionPrefix)) return true;
    const rest = sessionId.startsWith(this.#names.prefix)
      ? sessionId.slice(this.#names.prefix.length)
      : undefined;
    return (
      rest !== undefined &&
      /^~[^/]+\//.test(rest) &&
      rest.slice(rest.indexOf('/') + 1).startsWith(SESSION_PREFIX)
    );
  }

  async list(params: ListTasksRequest): Promise<ListTasksResponse> {
    const pageSize = Math.min(Math.max(params.pageSize ?? MAX_TASKS_PAGE, 1), MAX_TASKS_PAGE);
    const page = await this.#runtime.list({
      ...(params.contextId
        ? { sessionId: this.#names.sessionOf(params.contextId) }
        : { sessionPrefix: this.#names.sessionPrefix }),
      limit: pageSize,
      ...(params.pageToken ? { cursor: params.pageToken } : {}),
    });
    const tasks: Task[] = [];
    for (const record of page.calls) {
      const task =
        (await this.load(this.#names.taskIdOf(record.callId))) ?? taskOfRecord(record, this.#names);
      if (params.status && task.status?.state !== params.status) continue;
      tasks.push(params.includeArtifacts === false ? { ...task, artifacts: [] } : task);
    }
    return { tasks, nextPageToken: page.nextCursor ?? '', pageSize, totalSize: tasks.length };
  }
}
