import {
  type CallToolResult,
  type JSONRPCRequest,
  ProtocolError,
  ProtocolErrorCode,
  type Result,
  Server,
  type ServerCapabilities,
  type ServerContext,
  SUPPORTED_PROTOCOL_VERSIONS,
} from '@modelcontextprotocol/server';
import { servesControl } from './background-control.js';
import { CALL_APP_URI, callAppPage, MCP_APP_MIME_TYPE } from './call-app.js';
import { requestScopeOf } from './scope.js';
import type { Serving } from './serving.js';
import { TASKS_EXTENSION } from './task-view.js';
import { serveLegacyTasks, serveTasks } from './tasks.js';
import { declaredTools } from './tool-declarations.js';
import { callTool, takesTasks } from './tools-call.js';

export interface ServerInfo {
  name: string;
  version: string;
}

/** How long a client may keep a `tools/list` answer (2026-07-28 caching hints). */
const TOOLS_LIST_TTL_MS = 30_000;

const CAPABILITIES: Record<Serving['era'], ServerCapabilities> = {
  legacy: {
    tools: {},
    resources: {},
    logging: {},
    tasks: { list: {}, cancel: {}, requests: { tools: { call: {} } } },
  },
  modern: { tools: {}, resources: {}, extensions: { [TASKS_EXTENSION]: {} } },
};

type Handler = (request: JSONRPCRequest, context: ServerContext) => Promise<Result>;

/** A task handed back by `tools/call`, carried past the SDK's check of a `CallToolResult`. */
class TaskHandOver {
  constructor(readonly result: Result) {}
}

function isTaskResult(result: Result): boolean {
  return 'task' in result || result.resultType === 'task';
}

/**
 * The SDK's server, with one change: a `tools/call` may answer with a task (2025-11-25's
 * `CreateTaskResult`, 2026-07-28's `resultType: "task"`). The SDK checks every `tools/call` result
 * as a `CallToolResult`; a task goes around that check, and everything else still takes it.
 */
class BatonServer extends Server {
  /** Told of each request handled (see `Serving.activity`); set once the SDK's own handlers are in. */
  activity: Serving['activity'];

  protected override _wrapHandler(method: string, handler: Handler): Handler {
    const inner =
      method === 'tools/call'
        ? this.#passingTasks(handler)
        : saidTruly(method, super._wrapHandler(method, handler));
    return async (request, context) => {
      const activity = this.activity;
      if (!activity) return inner(request, context);
      activity.begin();
      try {
        return await inner(request, context);
      } finally {
        activity.end();
      }
    };
  }

  #passingTasks(handler: Handler): Handler {
    const checked = super._wrapHandler('tools/call', async (request, context) => {
      const result = await handler(request, context);
      if (isTaskResult(result)) throw new TaskHandOver(result);
      return result;
    });
    return async (request, context) => {
      try {
        return await checked(request, context);
      } catch (thrown) {
        if (thrown instanceof TaskHandOver) return thrown.result;
        throw thrown;
      }
    };
  }
}

/** The first revision with tasks (`capabilities.tasks`): an earlier client is not offered them. */
const FIRST_TASKS_REVISION = '2025-11-25';

/**
 * What the endpoint says of itself, made true where the SDK's answer is narrower or wider:
 * `server/discover` lists every revision it serves (the SDK lists the 2026 ones only, though the
 * same endpoint takes `initialize` for the 2025 ones), and `initialize` offers the capabilities of
 * the revision it agreed on only.
 */
function saidTruly(method: string, handler: Handler): Handler {
  if (method === 'server/discover') {
    return async (request, context) => {
      const result = await handler(request, context);
      const modern = Array.isArray(result.supportedVersions) ? (result.supportedVersions as string[]) : [];
      const served = [
        ...modern,
        ...SUPPORTED_PROTOCOL_VERSIONS.filter((version) => !modern.includes(version)),
      ];
      return { ...result, supportedVersions: served };
    };
  }
  if (method === 'initialize') {
    return async (request, context) => {
      const result = await handler(request, context);
      const { protocolVersion, capabilities } = result as { protocolVersion?: string; capabilities?: object };
      if (protocolVersion === undefined || protocolVersion >= FIRST_TASKS_REVISION || !capabilities)
        return result;
      const { tasks: _notOffered, ...offered } = capabilities as ServerCapabilities;
      return { ...result, capabilities: offered };
    };
  }
  return handler;
}

/** An MCP server over a runtime's tools, for one scope and one protocol generation. */
export function mcpServer(serving: Serving, info: ServerInfo): Server {
  const server = new BatonServer(info, {
    capabilities: CAPABILITIES[serving.era],
    cacheHints: { 'tools/list': { ttlMs: TOOLS_LIST_TTL_MS, cacheScope: 'private' } },
    // A tampered or expired input round is refused before the handler runs (-32602).
    ...(serving.requestStates ? { requestState: { verify: serving.requestStates.verify } } : {}),
  });
  server.activity = serving.activity;
  // What a request may do is its own credential's (2025-11-25: the session keeps only whose ids).
  const servingOf = (context: ServerContext): Serving => {
    const scope = requestScopeOf(context, serving.scope);
    return scope === serving.scope ? serving : { ...serving, scope };
  };
  // Whether the client takes tasks: 2026-07-28 declares it on each request, 2025-11-25 at `initialize`.
  server.setRequestHandler('tools/list', (_request, context) => ({
    tools: declaredTools(
      servingOf(context),
      serving.era === 'modern'
        ? takesTasks(context)
        : (server.getClientCapabilities()?.tasks?.requests?.tools as { call?: object } | undefined)?.call !==
            undefined,
    ),
  }));
  // A task is not among the SDK's types for a `tools/call` result; the wire allows it.
  server.setRequestHandler(
    'tools/call',
    (request, context) =>
      callTool(
        servingOf(context),
        request,
        context,
        server.getClientCapabilities()?.elicitation !== undefined,
      ) as Promise<CallToolResult>,
  );
  serveCallApp(server, serving);
  if (serving.era === 'legacy') serveLegacyTasks(server, serving);
  else serveTasks(server, serving);
  return server;
}

/**
 * The MCP App of a background call (`ui://baton/call.html`), served where a call may go to the
 * background and the background-control tools it follows the call with are served.
 */
function serveCallApp(server: Server, serving: Serving): void {
  const served = servesControl(serving);
  const resource = {
    uri: CALL_APP_URI,
    name: 'baton-call',
    title: 'A background call',
    description: 'Shows one call that goes on in the background, live, with its cancel',
    mimeType: MCP_APP_MIME_TYPE,
  };
  server.setRequestHandler('resources/list', () => ({ resources: served ? [resource] : [] }));
  server.setRequestHandler('resources/read', async (request) => {
    if (!served || request.params.uri !== CALL_APP_URI) {
      throw new ProtocolError(ProtocolErrorCode.ResourceNotFound, `no resource ${request.params.uri}`);
    }
    return { contents: [{ uri: CALL_APP_URI, mimeType: MCP_APP_MIME_TYPE, text: await callAppPage() }] };
  });
}
