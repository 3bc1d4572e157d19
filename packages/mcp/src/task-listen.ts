import { type CallRecord, isTerminalStatus } from '@baton/contracts';
import { CLIENT_CAPABILITIES_META_KEY, SUBSCRIPTION_ID_META_KEY } from '@modelcontextprotocol/server';
import type { Subscription } from 'rxjs';
import { CALL_SESSIONS, type Serving, TASK_SESSIONS } from './serving.js';
import { detailedTaskOf, TASKS_EXTENSION } from './task-view.js';

/** Call events after which a task may look different: its status, or its need for input. */
const STATE_EVENTS = new Set([
  'queued',
  'started',
  'retrying',
  'backgrounded',
  'succeeded',
  'failed',
  'cancelled',
  'timed_out',
]);

interface ListenRequest {
  id: string | number;
  params?: {
    notifications?: { taskIds?: unknown };
    _meta?: Record<string, unknown>;
  };
}

/** Whether a 2026-07-28 request is a `subscriptions/listen` for tasks, which this package serves itself. */
export function isTaskListen(body: unknown): body is ListenRequest {
  const request = body as { method?: unknown; params?: { notifications?: { taskIds?: unknown } } } | null;
  return request?.method === 'subscriptions/listen' && Array.isArray(request.params?.notifications?.taskIds);
}

function sse(message: unknown): string {
  return `event: message\ndata: ${JSON.stringify(message)}\n\n`;
}

/**
 * `subscriptions/listen` with `taskIds` (the tasks extension): acknowledges the tasks of this scope
 * among them, pushes `notifications/tasks` with each one's full state (what `tasks/get` would
 * answer) whenever it changes, and ends the stream once every one has ended. Ids of other tenants,
 * or of no task, are left out of the acknowledgement.
 */
export async function listenToTasks(
  serving: Omit<Serving, 'era' | 'sessionName' | 'hold' | 'notify'>,
  request: ListenRequest,
  signal: AbortSignal,
): Promise<Response> {
  const { runtime, scope } = serving;
  const capabilities = request.params?._meta?.[CLIENT_CAPABILITIES_META_KEY] as
    | { extensions?: Record<string, unknown> }
    | undefined;
  if (capabilities?.extensions?.[TASKS_EXTENSION] === undefined) {
    return Response.json({
      jsonrpc: '2.0',
      id: request.id,
      error: {
        code: -32021,
        message: 'Missing required client capability',
        data: { requiredCapabilities: { extensions: { [TASKS_EXTENSION]: {} } } },
      },
    });
  }
  const listed = request.params?.notifications?.taskIds;
  const asked = (Array.isArray(listed) ? listed : []).filter((id): id is string => typeof id === 'string');
  const records = new Map<string, CallRecord>();
  for (const taskId of new Set(asked)) {
    const record = await runtime.get(scope.inside(taskId));
    const own = [CALL_SESSIONS, TASK_SESSIONS].some((prefix) =>
      record?.sessionId.startsWith(scope.inside(prefix)),
    );
    if (record && own) records.set(taskId, record);
  }
  const meta = { [SUBSCRIPTION_ID_META_KEY]: request.id };
  const encoder = new TextEncoder();
  const subscriptions: Subscription[] = [];
  const live = new Set(records.keys());
  let stream!: ReadableStreamDefaultController<Uint8Array>;
  let closed = false;
  const write = (message: unknown) => {
    if (!closed) stream.enqueue(encoder.encode(sse(message)));
  };
  const close = () => {
    if (closed) return;
    write({ jsonrpc: '2.0', id: request.id, result: { resultType: 'complete', _meta: meta } });
    closed = true;
    for (const subscription of subscriptions) subscription.unsubscribe();
    stream.close();
  };
  const push = async (taskId: string) => {
    const record = await runtime.get(scope.inside(taskId));
    if (!record || closed) return;
    write({
      jsonrpc: '2.0',
      method: 'notifications/tasks',
      params: { ...(await detailedTaskOf(record, serving)), _meta: meta },
    });
    if (isTerminalStatus(record.status)) {
      live.delete(taskId);
      if (live.size === 0) close();
    }
  };
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      stream = controller;
      write({
        jsonrpc: '2.0',
        method: 'notifications/subscriptions/acknowledged',
        params: { notifications: { taskIds: [...records.keys()] }, _meta: meta },
      });
      for (const [taskId, record] of records) {
        if (isTerminalStatus(record.status)) {
          void push(taskId);
          continue;
        }
        subscriptions.push(
          runtime.follow({ callId: record.callId }).subscribe((event) => {
            if (STATE_EVENTS.has(event.type)) void push(taskId);
          }),
        );
      }
      if (records.size === 0) close();
    },
    cancel() {
      closed = true;
      for (const subscription of subscriptions) subscription.unsubscribe();
    },
  });
  signal.addEventListener('abort', () => {
    closed = true;
    for (const subscription of subscriptions) subscription.unsubscribe();
  });
  return new Response(body, {
    headers: { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' },
  });
}
