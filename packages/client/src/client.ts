import type {
  AnyTool,
  CallEvent,
  CallRecord,
  CallStatus,
  Notification,
  NotificationStatus,
  SteerReceipt,
  ToolCallReply,
} from '@baton/contracts';
import { isBatonClientError } from './errors.js';
import { type FollowOptions, followCall } from './follow.js';
import { type Connection, jsonOf, send } from './http.js';
import type { ToolCallInput, ToolSource, ToolsOf } from './tools.js';

export interface ClientOptions extends Connection {}

export interface CallRequestOptions {
  /** Gives up waiting for the reply; the call itself goes on (cancel it with `cancel`). */
  signal?: AbortSignal;
}

export interface ListCallsFilter {
  sessionId?: string;
  status?: CallStatus;
  /** Calls of this tool only. */
  tool?: string;
  /** The `nextCursor` of the previous page. */
  cursor?: string;
  /** At most this many (1 to 1,000). */
  limit?: number;
}

export interface CallPage {
  calls: CallRecord[];
  /** Set when there are more: pass it as `cursor`. */
  nextCursor?: string;
}

export interface NotificationFilter {
  sessionId?: string;
  status?: NotificationStatus;
  /** At most this many (1 to 1,000; the server's default is 100). */
  limit?: number;
  /** The id of the last notification of the previous page. */
  after?: string;
}

export type DeclarationFormat = 'mcp' | 'openai' | 'anthropic' | 'gemini';

/** Baton's REST API, typed by the tools `T` when it is made with them. */
export interface BatonClient<T extends AnyTool = AnyTool> {
  /** Runs a call: the reply comes inline, or `backgrounded` at its inline budget. */
  call<const R extends ToolCallInput<T>>(
    request: R,
    options?: CallRequestOptions,
  ): Promise<ToolCallReply<T, R['name']>>;
  /** One call's record, or `undefined` when there is none (for this tenant). */
  get(callId: string): Promise<CallRecord | undefined>;
  /** Calls, newest first, a page at a time. */
  list(filter?: ListCallsFilter): Promise<CallPage>;
  /** Cancels a queued or running call; false when it had ended. */
  cancel(callId: string): Promise<boolean>;
  /**
   * Steering: sends a running call a message, which its tool reads while it runs. Resolves once it
   * is stored, with its number in the call; a refusal throws a `BatonClientError` with the server's
   * code (`call_not_found`, `call_ended`, `not_steerable`, `invalid_arguments`).
   */
  steer(callId: string, message: unknown): Promise<SteerReceipt>;
  /** Lets a call that waits for approval run. */
  approve(callId: string): Promise<boolean>;
  /** Ends a call that waits for approval, with the reason shown to the model. */
  reject(callId: string, reason: string): Promise<boolean>;
  /**
   * The call's events as they happen, from its first (or after `options.after`), ending after its
   * terminal event, or after its notification when it was backgrounded. A dropped connection is
   * taken up again from the last event.
   */
  follow(callId: string, options?: FollowOptions): AsyncIterable<CallEvent>;
  notifications: {
    /** Notifications of backgrounded calls (their ends, and updates and reminders while they run), oldest first. */
    list(filter?: NotificationFilter): Promise<Notification[]>;
    /** Acknowledges a queued notification; false when it is not one (acknowledged already, or unknown). */
    ack(notificationId: string): Promise<boolean>;
  };
  /** The server's tools, declared in a provider's format (MCP's by default). */
  tools(format?: DeclarationFormat): Promise<Record<string, unknown>[]>;
}

/**
 * A client of Baton's REST API. Give it the tools' type to have `call` check names and arguments
 * and type each tool's output: `createClient<typeof tools>({ baseUrl })`, where `tools` is a list
 * of tools or a module of them (`typeof import('./tools.js')`).
 */
export function createClient<const S extends ToolSource = readonly AnyTool[]>(
  options: ClientOptions,
): BatonClient<ToolsOf<S>> {
  const connection: Connection = { ...options };
  const path = (callId: string, action = '') => `/v1/calls/${encodeURIComponent(callId)}${action}`;
  const done = async (url: string, key: string, body?: unknown) =>
    (await jsonOf<Record<string, boolean>>(await send(connection, 'POST', url, { body: body ?? {} })))[
      key
    ] === true;
  const get = async (callId: string): Promise<CallRecord | undefined> => {
    try {
      return await jsonOf<CallRecord>(await send(connection, 'GET', path(callId)));
    } catch (error) {
      if (isBatonClientError(error, 'not_found')) return undefined;
      throw error;
    }
  };
  return {
    async call(request, { signal } = {}) {
      return jsonOf(await send(connection, 'POST', '/v1/calls', { body: request, signal }));
    },
    get,
    async list(filter = {}) {
      return jsonOf(await send(connection, 'GET', '/v1/calls', { query: { ...filter } }));
    },
    cancel: (callId) => done(path(callId, '/cancel'), 'cancelled'),
    async steer(callId, message) {
      return jsonOf(await send(connection, 'POST', path(callId, '/messages'), { body: { message } }));
    },
    approve: (callId) => done(path(callId, '/approve'), 'approved'),
    reject: (callId, reason) => done(path(callId, '/reject'), 'rejected', { reason }),
    follow: (callId, followOptions = {}) => followCall(connection, callId, followOptions, () => get(callId)),
    notifications: {
      async list(filter = {}) {
        return jsonOf(await send(connection, 'GET', '/v1/notifications', { query: { ...filter } }));
      },
      async ack(notificationId) {
        try {
          return await done(`/v1/notifications/${encodeURIComponent(notificationId)}/ack`, 'acknowledged');
        } catch (error) {
          // Not one of the tenant's queued notifications (any more).
          if (isBatonClientError(error, 'not_found')) return false;
          throw error;
        }
      },
    },
    async tools(format = 'mcp') {
      return jsonOf(await send(connection, 'GET', '/v1/tools', { query: { format } }));
    },
  };
}
