import type { AgentCard, AgentSkill } from '@a2a-js/sdk';
import { TaskState } from '@a2a-js/sdk';
import { AgentEvent, DefaultRequestHandler, type PushNotificationStore } from '@a2a-js/sdk/server';
import { type Notification, notificationText } from '@baton/contracts';
import { BUILTIN_TOOLS, type Runtime } from '@baton/runtime';
import { BatonEventBuses } from './buses.js';
import { BatonAgentExecutor, type CallerOf, endEvents } from './executor.js';
import { pushEnd, QUIET_SENDER, TaskPushConfigs } from './push.js';
import { BatonTaskStore } from './task-store.js';
import { statusOf, TaskNames, taskOfRecord } from './tasks.js';

export interface BatonA2aAgentOptions {
  /** The agent card's own fields; its skills are the runtime's tools. */
  card: Pick<AgentCard, 'name' | 'description' | 'version'> & {
    /** Where the agent's JSON-RPC endpoint is. */
    url: string;
  };
  /**
   * Where the tasks' push notification configs are kept: given, the agent card offers push
   * notifications, and the end of a task whose call went on in the background is POSTed to each
   * of its configs by the runtime's webhooks (signed with `webhooks.secret`, kept and retried).
   * The SDK's `InMemoryPushNotificationStore` keeps them for one process; its
   * `DatabasePushNotificationStore` (on `kysely`) keeps them across a restart.
   */
  pushNotificationStore?: PushNotificationStore;
  /**
   * The prefix of the ids the agent's calls and sessions are kept under: a tenant's (`tenant/`)
   * where one runtime serves several, so that each tenant's agent sees its own tasks alone.
   * Default none: tasks are `a2a:<contextId>` sessions' calls, under the tasks' own ids.
   */
  prefix?: string;
  /**
   * Who asks, of the `User` the transport's `userBuilder` made of the request: the runtime decides
   * by it which skills the caller may run (its scopes) and how many (its quota), as for any call.
   * Default: every caller is the trusted one.
   */
  callerOf?: CallerOf;
  /** A failure to bring a call's end to its task (it is logged by default). */
  onError?: (error: unknown) => void;
}

export interface BatonA2aAgent {
  readonly agentCard: AgentCard;
  /** The SDK's request handler, for its transports (`jsonRpcHandler`, `restHandler`, gRPC). */
  readonly requestHandler: DefaultRequestHandler;
  readonly taskStore: BatonTaskStore;
  /** Resolves once the tasks still running from before a restart can be followed. */
  readonly ready: Promise<void>;
  close(): void;
}

/** The skills of an agent whose tools are the runtime's: one per tool, its arguments as JSON. */
export function skillsOf(runtime: Pick<Runtime, 'tools' | 'defaultMode'>): AgentSkill[] {
  const builtins = new Set<string>(BUILTIN_TOOLS);
  return runtime.tools
    .definitions()
    .filter((tool) => !builtins.has(tool.name))
    .map((tool) => ({
      id: tool.name,
      name: tool.title ?? tool.name,
      description: tool.description,
      tags: [tool.execution.mode ?? runtime.defaultMode],
      examples: [JSON.stringify({ skill: tool.name, arguments: {} })],
      inputModes: ['application/json'],
      outputModes: ['application/json', 'text/plain'],
      securityRequirements: [],
    }));
}

/**
 * An A2A agent whose skills are the runtime's tools, on the SDK's `DefaultRequestHandler`: each
 * task a Baton call, kept by Baton's store. The end of a call that went on in the background comes
 * to its task when it ends: `GetTask` and `ListTasks` show it, `SubscribeToTask` streams it, and
 * after a restart the next process brings it the same way.
 */
export function batonA2aAgent(
  runtime: Runtime,
  {
    card,
    pushNotificationStore,
    prefix,
    callerOf,
    onError = (error) => console.error(error),
  }: BatonA2aAgentOptions,
): BatonA2aAgent {
  const agentCard: AgentCard = {
    name: card.name,
    description: card.description,
    version: card.version,
    supportedInterfaces: [{ url: card.url, protocolBinding: 'JSONRPC', tenant: '', protocolVersion: '1.0' }],
    provider: undefined,
    capabilities: { streaming: true, pushNotifications: pushNotificationStore !== undefined, extensions: [] },
    securitySchemes: {},
    securityRequirements: [],
    defaultInputModes: ['application/json'],
    defaultOutputModes: ['application/json', 'text/plain'],
    skills: skillsOf(runtime),
    signatures: [],
  };
  const names = new TaskNames(prefix);
  const buses = new BatonEventBuses();
  const taskStore = new BatonTaskStore(runtime, names);
  const executor = new BatonAgentExecutor(runtime, buses, names, callerOf);
  const pushConfigs =
    pushNotificationStore &&
    new TaskPushConfigs(pushNotificationStore, (url) => runtime.webhooks.destinationProblem(url));
  const requestHandler = new DefaultRequestHandler(
    agentCard,
    taskStore,
    executor,
    buses,
    pushConfigs,
    pushConfigs && QUIET_SENDER,
  );

  /**
   * A call of a task ended (or sent an update): its subscribers are told, its end pushed, and only
   * then is its notification done (a failure leaves it for the next process to bring again).
   */
  const broughtToTask = async (notification: Notification) => {
    const record = await runtime.get(notification.callId);
    if (record !== undefined) {
      const task = names.taskOf(record);
      if (notification.outcome === 'running') {
        const bus = buses.isInBackground(task.id) ? buses.getByTaskId(task.id) : undefined;
        bus?.publish(
          AgentEvent.statusUpdate({
            taskId: task.id,
            contextId: task.contextId,
            status: statusOf(task, TaskState.TASK_STATE_WORKING, notificationText(notification)),
            metadata: { baton: { updateSeq: notification.updateSeq } },
          }),
        );
      } else {
        const reply = {
          callId: task.id,
          status: record.status,
          output: record.output,
          error: record.error,
        };
        const text =
          typeof record.output === 'string'
            ? record.output
            : (record.error?.message ?? JSON.stringify(record.output ?? null));
        const events = endEvents(task, reply as Parameters<typeof endEvents>[1], text);
        buses.ended(task.id, (bus) => {
          for (const event of events) bus.publish(event);
        });
        if (pushConfigs) {
          const ended = (await taskStore.load(task.id)) ?? taskOfRecord(record, names);
          await pushEnd(runtime, pushConfigs, notification, ended);
        }
      }
    }
    await runtime.notifications.ack(notification.id);
  };
  const watching = runtime.notifications.watch({ sessionPrefix: names.sessionPrefix }).subscribe({
    next: (notification) => void broughtToTask(notification).catch(onError),
    error: onError,
  });
  const ready = (async () => {
    await runtime.ready;
    let cursor: string | undefined;
    do {
      const page = await runtime.list({
        sessionPrefix: names.sessionPrefix,
        status: 'backgrounded',
        ...(cursor ? { cursor } : {}),
      });
      for (const record of page.calls) buses.inBackground(names.taskIdOf(record.callId));
      cursor = page.nextCursor;
    } while (cursor !== undefined);
  })();
  return { agentCard, requestHandler, taskStore, ready, close: () => watching.unsubscribe() };
}
