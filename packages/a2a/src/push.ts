import type { Task, TaskPushNotificationConfig } from '@a2a-js/sdk';
import { RequestMalformedError } from '@a2a-js/sdk/errors';
import {
  type PushNotificationSender,
  type PushNotificationStore,
  ServerCallContext,
  V1PushNotificationSerializer,
} from '@a2a-js/sdk/server';
import type { Notification } from '@baton/contracts';
import type { Runtime, WebhookSend } from '@baton/runtime';

/**
 * The one scope the configs are kept in: a task's configs are the task's, as its task is open to
 * whoever knows its id (the task store's tasks are not kept per caller either). So the end of a
 * task, in whichever process it comes, finds them without the request that made them.
 */
const TASK_SCOPE = new ServerCallContext();

export const PUSH_MESSAGES = {
  badUrl: (url: string) =>
    `A push notification config's url must be an http:// or https:// URL (got ${JSON.stringify(url)}).`,
  refused: (problem: string) => `A push notification config's url is refused: ${problem}`,
};

const isHttpUrl = (url: string) => {
  const parsed = URL.canParse(url) ? new URL(url) : undefined;
  return parsed?.protocol === 'http:' || parsed?.protocol === 'https:';
};

/**
 * The push notification configs of the agent's tasks, kept in the given store (the SDK's
 * `InMemoryPushNotificationStore`, or its `DatabasePushNotificationStore` for configs that
 * outlive the process) under each task alone.
 */
export class TaskPushConfigs implements PushNotificationStore {
  readonly #store: PushNotificationStore;
  readonly #destinationProblem: (url: string) => string | undefined;

  /**
   * `destinationProblem`: why the webhooks' rules would refuse a URL (`runtime.webhooks.destinationProblem`:
   * loopback and private destinations unless allowed). Default: any http(s) URL is taken.
   */
  constructor(
    store: PushNotificationStore,
    destinationProblem: (url: string) => string | undefined = () => undefined,
  ) {
    this.#store = store;
    this.#destinationProblem = destinationProblem;
  }

  async save(taskId: string, _context: ServerCallContext, config: TaskPushNotificationConfig): Promise<void> {
    // Refused here, with its reason, rather than at the end of the task, when no one hears it.
    if (!isHttpUrl(config.url)) throw new RequestMalformedError(PUSH_MESSAGES.badUrl(config.url));
    const problem = this.#destinationProblem(config.url);
    if (problem !== undefined) throw new RequestMalformedError(PUSH_MESSAGES.refused(problem));
    return this.#store.save(taskId, TASK_SCOPE, config);
  }

  load(taskId: string): Promise<TaskPushNotificationConfig[]> {
    return this.#store.load(taskId, TASK_SCOPE);
  }

  delete(taskId: string, _context: ServerCallContext, configId?: string): Promise<void> {
    return this.#store.delete(taskId, TASK_SCOPE, configId);
  }
}

/**
 * The SDK's sender, left silent: what happens within a request is its answer, and a task's end is
 * pushed from Baton's store (`pushEnd`), signed, kept and retried as Baton's webhooks are.
 */
export const QUIET_SENDER: PushNotificationSender = { send: async () => {} };

const serializer = new V1PushNotificationSerializer();

/** The headers a config asks for: its `authentication` as `Authorization`, else its token, as the SDK sends them. */
function configHeaders(config: TaskPushNotificationConfig): Record<string, string> {
  const { authentication, token } = config;
  if (authentication?.scheme && authentication.credentials)
    return { authorization: `${authentication.scheme} ${authentication.credentials}` };
  return token ? { 'x-a2a-notification-token': token } : {};
}

/** The task, as a push to each of its configs: the SDK's v1.0 body (a `StreamResponse` of the task). */
export function pushSends(task: Task, configs: readonly TaskPushNotificationConfig[]): WebhookSend[] {
  const { body, contentType } = serializer.serialize({ payload: { $case: 'task', value: task } }, task);
  return configs.map((config) => ({
    key: config.id,
    url: config.url,
    body,
    headers: { 'content-type': contentType, ...configHeaders(config) },
  }));
}

/**
 * Pushes the end of a task whose call went on in the background to each of its configs: a webhook
 * delivery of the call's notification per config, stored before the notification is acknowledged
 * (a process that dies in between pushes it again, under the same ids: once).
 */
export async function pushEnd(
  runtime: Pick<Runtime, 'webhooks'>,
  configs: Pick<TaskPushConfigs, 'load'>,
  notification: Notification,
  task: Task,
): Promise<void> {
  const found = await configs.load(task.id);
  if (found.length > 0) await runtime.webhooks.deliver(notification, pushSends(task, found));
}
