import { isUtf8 } from 'node:buffer';
import { randomBytes } from 'node:crypto';
import { type ExecutionMode, type JsonBodyRead, type JsonTextLimits, readJsonBody } from '@baton/contracts';
import type { Runtime } from '@baton/runtime';
import {
  type AuthInfo,
  createRequestStateCodec,
  createMcpHandler as createSdkHandler,
  hostHeaderValidationResponse,
  isJsonContentType,
  isLegacyRequest,
  localhostAllowedHostnames,
  localhostAllowedOrigins,
  originValidationResponse,
  ProtocolErrorCode,
} from '@modelcontextprotocol/server';
import { cursorSeal } from './cursors.js';
import { HEADER_MISMATCH, paramHeaderMismatch } from './param-headers.js';
import { jsonRpcErrorResponse } from './responses.js';
import { type McpScope, SINGLE_TENANT, toolCallRefusal } from './scope.js';
import { mcpServer, type ServerInfo } from './server.js';
import type { InputRound } from './serving.js';
import { type ClosedSession, LegacySessions, type SessionLimits } from './sessions.js';
import { isTaskListen, listenToTasks } from './task-listen.js';
import { POLL_INTERVAL_MS } from './task-view.js';
import { VERSION } from './version.js';

export interface McpHandlerOptions {
  runtime: Runtime;
  /**
   * Who is asking: the scope of a request's credentials, or undefined to refuse it with 401.
   * Default: every request is the one tenant.
   */
  authenticate?: (request: Request) => McpScope | undefined | Promise<McpScope | undefined>;
  /**
   * The `WWW-Authenticate` of a request `authenticate` refused (undefined: the default). Default
   * `Bearer realm="baton", error="invalid_token"`; an OAuth resource server names its metadata
   * (RFC 9728: `Bearer resource_metadata="…"`).
   */
  challengeOf?: (request: Request) => string | undefined;
  /**
   * Host names (no port) that requests may name, against DNS rebinding. Default: the loopback
   * names; `'any'` turns the check off (for a server behind tokens or a proxy that checks).
   */
  allowedHosts?: readonly string[] | 'any';
  /** Origin host names a browser request may come from. Default: the loopback names. */
  allowedOrigins?: readonly string[] | 'any';
  /** 2025-11-25 sessions: their idle TTL and their caps. */
  sessions?: SessionLimits;
  /** How often clients should poll `tasks/get`, in ms. Default 1,000. */
  pollIntervalMs?: number;
  /**
   * How long the runtime keeps an ended call (its `retention.endedTtlMs`), so that a task reports
   * the `ttl` it really has. Default: none, and a task's `ttl` is null (kept until removed).
   */
  retentionMs?: number;
  /** The mode of tools that name none: the runtime's `defaultMode`. Default `inline`. */
  defaultMode?: ExecutionMode;
  /**
   * Serve the background-control tools (`check_background`, `wait_background`,
   * `cancel_background`, `list_background`) whenever a tool may go to the background, so that a
   * client that takes no tasks gets its result: the acknowledgement names the tool and the
   * `call_id` to give it. Each sees only the calls of the caller's session. Default true.
   */
  backgroundControl?: boolean;
  /** How the server names itself. */
  serverInfo?: ServerInfo;
  /** Where errors that reach no client go. Default: nowhere. */
  onError?: (error: Error) => void;
  /** Told of each idle 2025-11-25 session closed to make room for a new one, to log it. */
  onIdleSessionClosed?: (closed: ClosedSession) => void;
  /** The clock sessions age by. Default `Date.now`. */
  now?: () => number;
  /** The largest request body read, in bytes; past it the answer is 413. Default 4 MiB. */
  maxBodyBytes?: number;
  /**
   * How deep a request body may nest, and how many keys and nested values it may hold, read
   * before it is parsed; past them the answer is 413. Defaults `DEFAULT_MAX_BODY_DEPTH` and
   * `DEFAULT_MAX_BODY_KEYS` of `@baton/contracts`.
   */
  bodyShape?: JsonTextLimits;
  /**
   * The HMAC key (32 bytes or more) that seals the `requestState` of an input-required round
   * (2026-07-28) and the cursors of `tasks/list`. Default: a random key per handler; give every
   * process behind one endpoint the same.
   */
  requestStateKey?: Uint8Array | string;
}

/** The SDK's own bound on a request body. */
export const DEFAULT_MAX_BODY_BYTES = 4 * 1024 * 1024;

/**
 * The body as it arrives, its size and shape checked on the way (see `readJsonBody`). Its text is
 * taken only if it is UTF-8: bytes that are not would otherwise turn silently into U+FFFD in the
 * arguments and ids.
 */
function readBody(
  request: Request,
  limits: JsonTextLimits & { maxBytes: number },
  given: AsyncIterable<Uint8Array> | undefined,
): Promise<JsonBodyRead> {
  const declared = Number(request.headers.get('content-length') ?? 0);
  if (declared > limits.maxBytes) return Promise.resolve({ kind: 'too_large' });
  const body = given ?? (request.body as unknown as AsyncIterable<Uint8Array> | null);
  if (!body) return Promise.resolve({ kind: 'read', bytes: new Uint8Array(0) });
  return readJsonBody(body, limits);
}

/** What a host may give with a request: its body parsed already, or its bytes as they arrive. */
export interface McpRequestBody {
  /** The body, parsed by the host's own parser. */
  parsedBody?: unknown;
  /** The body's bytes, in place of the request's own stream (a Node request: no web stream to make). */
  body?: AsyncIterable<Uint8Array>;
}

export interface McpHandler {
  /** Web-standard face: one HTTP request in, its response out (Hono, Workers, Bun, Deno). */
  fetch(request: Request, options?: McpRequestBody): Promise<Response>;
  /** `fetch` reads the `body` given in its options, in place of the request's stream. */
  readonly readsGivenBody: true;
  /** Closes the open sessions and streams. */
  close(): Promise<void>;
  /** Open 2025-11-25 sessions. */
  readonly sessionCount: number;
}

const BATON: ServerInfo = { name: 'baton', version: VERSION };

/** The scope rides the SDK's pass-through `authInfo` to the per-request server. */
function authInfoOf(scope: McpScope): AuthInfo {
  return { token: '', clientId: scope.tenant ?? '', scopes: [], extra: { scope } };
}

function scopeOfAuth(authInfo: AuthInfo | undefined): McpScope {
  return (authInfo?.extra?.scope as McpScope | undefined) ?? SINGLE_TENANT;
}

/**
 * Serves a runtime's tools over MCP Streamable HTTP, both protocol generations on one endpoint:
 * 2025-11-25 with sessions and core tasks, 2026-07-28 stateless with the tasks extension. A call
 * that passes its inline budget becomes a task for a client that takes tasks.
 */
export function createMcpHandler(options: McpHandlerOptions): McpHandler {
  const { runtime } = options;
  const info = options.serverInfo ?? BATON;
  const onError = options.onError ?? (() => {});
  const key = options.requestStateKey ?? randomBytes(32);
  const base = {
    runtime,
    defaultMode: options.defaultMode ?? 'inline',
    backgroundControl: options.backgroundControl ?? true,
    pollIntervalMs: options.pollIntervalMs ?? POLL_INTERVAL_MS,
    retentionMs: options.retentionMs,
    cursors: cursorSeal(key),
  } as const;
  const maxBodyBytes = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  const hosts = options.allowedHosts ?? localhostAllowedHostnames();
  const origins = options.allowedOrigins ?? localhostAllowedOrigins();
  const requestStates = createRequestStateCodec<InputRound>({ key });
  const legacy = new LegacySessions(
    base,
    info,
    options.sessions ?? {},
    options.now ?? Date.now,
    onError,
    options.onIdleSessionClosed,
  );
  const modern = createSdkHandler(
    ({ authInfo }) =>
      mcpServer(
        {
          ...base,
          scope: scopeOfAuth(authInfo),
          era: 'modern',
          // Stateless: no session to name calls after, to hold streams for, or to notify on.
          sessionName: 'stateless',
          hold: () => {},
          notify: async () => {},
          requestStates,
        },
        info,
      ),
    { legacy: 'reject', onerror: onError },
  );

  async function fetch(request: Request, given: McpRequestBody = {}): Promise<Response> {
    const refused =
      (hosts === 'any' ? undefined : hostHeaderValidationResponse(request, [...hosts])) ??
      (origins === 'any' ? undefined : originValidationResponse(request, [...origins]));
    if (refused) return refused;
    const scope = options.authenticate ? await options.authenticate(request) : SINGLE_TENANT;
    if (!scope) {
      return jsonRpcErrorResponse(401, -32000, 'Unauthorized: a valid bearer token is required', {
        'www-authenticate': options.challengeOf?.(request) ?? 'Bearer realm="baton", error="invalid_token"',
      });
    }
    let parsedBody = given.parsedBody;
    if (request.method === 'POST' && parsedBody === undefined) {
      if (!isJsonContentType(request.headers.get('content-type'))) {
        return jsonRpcErrorResponse(
          415,
          -32000,
          'Unsupported Media Type: Content-Type must be application/json',
        );
      }
      const body = await readBody(request, { ...options.bodyShape, maxBytes: maxBodyBytes }, given.body);
      if (body.kind === 'too_large') {
        return jsonRpcErrorResponse(
          413,
          -32000,
          `Payload Too Large: a request body is at most ${maxBodyBytes} bytes`,
        );
      }
      if (body.kind === 'refused') {
        return jsonRpcErrorResponse(
          413,
          -32000,
          `Payload Too Large: the request body is refused: ${body.refusal}`,
        );
      }
      if (!isUtf8(body.bytes)) {
        return jsonRpcErrorResponse(
          400,
          ProtocolErrorCode.ParseError,
          'Parse error: the body is not valid UTF-8',
        );
      }
      const text = Buffer.from(body.bytes.buffer, body.bytes.byteOffset, body.bytes.byteLength).toString(
        'utf8',
      );
      try {
        parsedBody = JSON.parse(text);
      } catch (error) {
        return jsonRpcErrorResponse(
          400,
          ProtocolErrorCode.ParseError,
          `Parse error: ${error instanceof Error ? error.message : String(error)}`,
        );
      }
    }
    const callRefused = await toolCallRefusal(runtime, scope, parsedBody);
    if (callRefused) return callRefused;
    const authInfo = authInfoOf(scope);
    // A request on a session is 2025-11-25's: 2026-07-28 has none.
    if (request.headers.has('mcp-session-id') || (await isLegacyRequest(request, parsedBody))) {
      return legacy.handle(request, scope, parsedBody, authInfo);
    }
    // The SDK serves the listen streams of its own notifications; task notifications are ours.
    if (isTaskListen(parsedBody)) return listenToTasks({ ...base, scope }, parsedBody, request.signal);
    // SEP-2243: the SDK checks `Mcp-Param-*` headers only for tools its own `McpServer` registered.
    const mismatch = paramHeaderMismatch(runtime.tools, parsedBody, request.headers);
    if (mismatch) return jsonRpcErrorResponse(400, HEADER_MISMATCH, `Header mismatch: ${mismatch}`);
    return modern.fetch(request, { parsedBody, authInfo });
  }

  return {
    fetch,
    readsGivenBody: true,
    async close() {
      await Promise.all([legacy.close(), modern.close()]);
    },
    get sessionCount() {
      return legacy.size;
    },
  };
}
