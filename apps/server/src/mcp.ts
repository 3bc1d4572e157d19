import { randomUUID } from 'node:crypto';
import { type CallRecord, type CallStatus, isTerminalStatus, toMcpTool } from '@baton/contracts';
import type { Runtime } from '@baton/runtime';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import {
  CallToolRequestSchema,
  type CallToolResult,
  CancelTaskRequestSchema,
  ErrorCode,
  GetTaskPayloadRequestSchema,
  GetTaskRequestSchema,
  isInitializeRequest,
  ListTasksRequestSchema,
  ListToolsRequestSchema,
  McpError,
  RELATED_TASK_META_KEY,
  type Task,
} from '@modelcontextprotocol/sdk/types.js';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { filter, firstValueFrom } from 'rxjs';
import { ended } from './call-end.js';
import type { TenantScope } from './tenancy.js';

/** MCP task statuses (spec 2025-11-25) for Baton's call states. */
const TASK_STATUS: Record<CallStatus, Task['status']> = {
  queued: 'working',
  inline: 'working',
  backgrounded: 'working',
  succeeded: 'completed',
  failed: 'failed',
  timed_out: 'failed',
  cancelled: 'cancelled',
};

/** How often a client should poll `tasks/get`. */
const POLL_INTERVAL_MS = 1_000;

/** Baton sessions of MCP calls are named after the MCP session, under this prefix. */
const MCP_SESSIONS = 'mcp:';

function statusMessageOf(record: CallRecord): string | undefined {
  if (record.approval === 'pending') return 'waiting for approval';
  if (record.error) return record.error.message;
  if (record.statusText !== undefined) return record.statusText;
  const progress = record.progress;
  if (!progress) return undefined;
  const total = progress.total === undefined ? '' : `/${progress.total}`;
  return `${progress.current}${total}${progress.unit ? ` ${progress.unit}` : ''}`;
}

function taskOf(record: CallRecord, scope: TenantScope): Task {
  const statusMessage = statusMessageOf(record);
  return {
    taskId: scope.outside(record.callId),
    status: TASK_STATUS[record.status],
    ttl: null,
    createdAt: new Date(record.createdAt).toISOString(),
    lastUpdatedAt: new Date(record.endedAt ?? record.startedAt ?? record.createdAt).toISOString(),
    pollInterval: POLL_INTERVAL_MS,
    ...(statusMessage !== undefined ? { statusMessage } : {}),
  };
}

/** What the model sees of an ended call, as MCP content; a failure is a result with `isError`. */
function toolResultOf(record: CallRecord): CallToolResult {
  if (record.status !== 'succeeded') {
    const message = record.error?.message ?? `The tool call ended ${record.status}.`;
    return { isError: true, content: [{ type: 'text', text: message }] };
  }
  const { output } = record;
  const text = typeof output === 'string' ? output : JSON.stringify(output ?? null);
  const images = (record.images ?? []).map((image) => ({
    type: 'image' as const,
    data: image.base64,
    mimeType: image.mediaType,
  }));
  const structured =
    typeof output === 'object' && output !== null && !Array.isArray(output)
      ? { structuredContent: output as Record<string, unknown> }
      : {};
  return { content: [{ type: 'text', text }, ...images], ...structured };
}

/**
 * One MCP server per MCP session: tools/list and tools/call over the runtime, and MCP tasks
 * (tasks/get, tasks/result, tasks/list, tasks/cancel) read from the Baton store. A task is a call:
 * its id is the call's id, and it is bound to the tenant, not to the MCP session, so a client
 * finds its tasks again after a reconnect or a server restart.
 */
function mcpServer(runtime: Runtime, scope: TenantScope, mcpSessionId: () => string | undefined): Server {
  const server = new Server(
    { name: 'baton', version: '0.1.0' },
    { capabilities: { tools: {}, tasks: { list: {}, cancel: {}, requests: { tools: { call: {} } } } } },
  );
  const tasksPrefix = scope.inside(MCP_SESSIONS);

  async function taskRecord(taskId: string): Promise<CallRecord> {
    const record = await runtime.get(scope.inside(taskId));
    if (!record?.sessionId.startsWith(tasksPrefix)) {
      throw new McpError(ErrorCode.InvalidParams, `Task not found: ${taskId}`);
    }
    return record;
  }

  async function recordOf(callId: string): Promise<CallRecord> {
    const record = await runtime.get(callId);
    if (!record) throw new McpError(ErrorCode.InternalError, `call ${scope.outside(callId)} was not kept`);
    return record;
  }

  server.setRequestHandler(ListToolsRequestSchema, () => ({
    tools: runtime.tools.definitions().map((tool) => toMcpTool(tool)),
  }));

  server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    const { name, arguments: args = {}, task, _meta } = request.params;
    const callId = scope.newCallId();
    const sessionId = tasksPrefix + (mcpSessionId() ?? 'anonymous');

    if (task) {
      // The task exists once its first event is stored; the client may ask for it right away.
      const stored = firstValueFrom(runtime.follow({ callId }));
      // `call()` never rejects: a refusal is a reply, and the task reports it.
      const reply = runtime.call({ name, args, sessionId, callId });
      await Promise.race([stored, reply]);
      return { task: taskOf(await recordOf(callId), scope) };
    }

    const progressToken = _meta?.progressToken;
    const progress =
      progressToken === undefined
        ? undefined
        : runtime
            .follow({ callId })
            .pipe(filter((event) => event.type === 'progress'))
            .subscribe((event) => {
              const { current, total, label } = event.progress;
              void extra.sendNotification({
                method: 'notifications/progress',
                params: {
                  progressToken,
                  progress: current,
                  ...(total !== undefined ? { total } : {}),
                  ...(label !== undefined ? { message: label } : {}),
                },
              });
            });
    // `notifications/cancelled` for this request aborts its signal.
    const cancel = () => void runtime.cancel(callId, 'The MCP client cancelled the request.');
    extra.signal.addEventListener('abort', cancel);
    try {
      const reply = await runtime.call({ name, args, sessionId, callId });
      // Without a task, an MCP request waits for the end, however long the call runs.
      if (reply.status === 'backgrounded') await ended(runtime, callId, extra.signal);
      return toolResultOf(await recordOf(callId));
    } finally {
      progress?.unsubscribe();
      extra.signal.removeEventListener('abort', cancel);
    }
  });

  server.setRequestHandler(GetTaskRequestSchema, async (request) =>
    taskOf(await taskRecord(request.params.taskId), scope),
  );

  server.setRequestHandler(GetTaskPayloadRequestSchema, async (request, extra) => {
    const { taskId } = request.params;
    const record = await taskRecord(taskId);
    if (!isTerminalStatus(record.status)) await ended(runtime, record.callId, extra.signal);
    return {
      ...toolResultOf(await recordOf(record.callId)),
      _meta: { [RELATED_TASK_META_KEY]: { taskId } },
    };
  });

  server.setRequestHandler(ListTasksRequestSchema, async (request) => {
    const cursor = request.params?.cursor;
    const page = await runtime.list({ sessionPrefix: tasksPrefix, ...(cursor ? { cursor } : {}) });
    return {
      tasks: page.calls.map((record) => taskOf(record, scope)),
      ...(page.nextCursor ? { nextCursor: page.nextCursor } : {}),
    };
  });

  server.setRequestHandler(CancelTaskRequestSchema, async (request) => {
    const record = await taskRecord(request.params.taskId);
    if (isTerminalStatus(record.status)) {
      throw new McpError(
        ErrorCode.InvalidParams,
        `Cannot cancel task in terminal status: ${TASK_STATUS[record.status]}`,
      );
    }
    await runtime.cancel(record.callId, 'The MCP client cancelled the task.');
    return taskOf(await recordOf(record.callId), scope);
  });

  return server;
}

function jsonRpcError(message: string) {
  return { jsonrpc: '2.0', error: { code: ErrorCode.InvalidRequest, message }, id: null };
}

/**
 * The MCP endpoint at `/mcp` (Streamable HTTP, stateful): an `initialize` opens an MCP session
 * bound to the tenant of its token; later requests name it with `Mcp-Session-Id`. Another tenant's
 * session is as unknown as a session that never was.
 */
export interface McpSessionOptions {
  /** A session unused this long is closed and forgotten. Default 30 minutes. */
  sessionTtlMs?: number;
  /** Open sessions per tenant (default 100) and in all (default 1,000); past it `initialize` gets 429. */
  sessionsPerTenant?: number;
  sessions?: number;
  /** The clock sessions age by. Default `Date.now`. */
  now?: () => number;
}

export const DEFAULT_MCP_SESSION_TTL_MS = 30 * 60_000;
export const DEFAULT_MCP_SESSIONS_PER_TENANT = 100;
export const DEFAULT_MCP_SESSIONS = 1_000;

interface McpSession {
  transport: StreamableHTTPServerTransport;
  scope: TenantScope;
  lastUsed: number;
}

export function mountMcp(
  app: FastifyInstance,
  runtime: Runtime,
  scopeOf: (request: FastifyRequest) => TenantScope | undefined,
  options: McpSessionOptions = {},
): void {
  const sessions = new Map<string, McpSession>();
  const ttlMs = options.sessionTtlMs ?? DEFAULT_MCP_SESSION_TTL_MS;
  const perTenant = options.sessionsPerTenant ?? DEFAULT_MCP_SESSIONS_PER_TENANT;
  const total = options.sessions ?? DEFAULT_MCP_SESSIONS;
  const now = options.now ?? Date.now;
  let lastSweep = now();

  /** Closes the sessions nobody used for the TTL: an abandoned session must not hold memory forever. */
  const sweep = () => {
    lastSweep = now();
    for (const [id, session] of sessions) {
      if (lastSweep - session.lastUsed < ttlMs) continue;
      sessions.delete(id);
      session.transport
        .close()
        .catch((error: unknown) =>
          app.log.warn({ err: error, session: id }, 'closing an idle MCP session failed'),
        );
    }
  };
  const sweeper = setInterval(sweep, Math.max(1_000, ttlMs / 2));
  sweeper.unref();

  app.route({
    method: ['GET', 'POST', 'DELETE'],
    url: '/mcp',
    handler: async (request, reply) => {
      const scope = scopeOf(request);
      if (!scope) return reply.code(401).send(jsonRpcError('a valid bearer token is required'));
      if (now() - lastSweep >= ttlMs / 10) sweep();
      const sessionId = request.headers['mcp-session-id'];
      let session = typeof sessionId === 'string' ? sessions.get(sessionId) : undefined;
      if (session) session.lastUsed = now();
      if (sessionId !== undefined && (!session || session.scope.tenant !== scope.tenant)) {
        return reply.code(404).send(jsonRpcError('Session not found'));
      }
      if (!session) {
        if (request.method !== 'POST' || !isInitializeRequest(request.body)) {
          return reply.code(400).send(jsonRpcError('No MCP session: send initialize first'));
        }
        const mine = [...sessions.values()].filter((open) => open.scope.tenant === scope.tenant).length;
        if (mine >= perTenant || sessions.size >= total) {
          return reply
            .code(429)
            .send(
              jsonRpcError(
                `too many open MCP sessions (at most ${perTenant} per tenant and ${total} in all): end one with DELETE, or wait for an idle one to expire`,
              ),
            );
        }
        const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
          sessionIdGenerator: randomUUID,
          onsessioninitialized: (id) => {
            sessions.set(id, { transport, scope, lastUsed: now() });
          },
        });
        transport.onclose = () => {
          if (transport.sessionId) sessions.delete(transport.sessionId);
        };
        await mcpServer(runtime, scope, () => transport.sessionId).connect(transport);
        session = { transport, scope, lastUsed: now() };
      }
      reply.hijack();
      await session.transport.handleRequest(request.raw, reply.raw, request.body);
    },
  });

  app.addHook('onClose', async () => {
    clearInterval(sweeper);
    await Promise.all([...sessions.values()].map(({ transport }) => transport.close()));
  });
}
