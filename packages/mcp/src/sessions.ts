import {
  type AuthInfo,
  isInitializeRequest,
  WebStandardStreamableHTTPServerTransport,
} from '@modelcontextprotocol/server';
import type { Subscription } from 'rxjs';
import { uuidv7 } from 'uuidv7';
import { jsonRpcErrorResponse } from './responses.js';
import type { McpScope } from './scope.js';
import { mcpServer, type ServerInfo } from './server.js';
import { CALL_SESSIONS, type Serving, TASK_SESSIONS } from './serving.js';

export interface SessionLimits {
  /** A session unused this long is closed and forgotten. Default 30 minutes. */
  ttlMs?: number;
  /**
   * Open sessions per tenant. At the cap, `initialize` closes the tenant's least recently used
   * idle session (no call that has not ended, no request or stream open) to make room; only when
   * every one is busy does it get 429. Default 100.
   */
  perTenant?: number;
  /** Open sessions in all; at the cap, as `perTenant`, over every tenant's. Default 1,000. */
  total?: number;
}

/** An idle session closed to make room for a new one. */
export interface ClosedSession {
  sessionId: string;
  tenant: string | undefined;
  /** How long it had been unused. */
  idleMs: number;
}

export const DEFAULT_SESSION_TTL_MS = 30 * 60_000;
export const DEFAULT_SESSIONS_PER_TENANT = 100;
export const DEFAULT_SESSIONS = 1_000;

interface Session {
  transport: WebStandardStreamableHTTPServerTransport;
  scope: McpScope;
  lastUsed: number;
  held: Subscription[];
  /** Requests being handled and GET streams open on it. */
  open: number;
}

/**
 * When a session id was issued: its UUIDv7 time (ms since the epoch), or undefined for an id that
 * is not one. Session ids are UUIDv7s, so an endpoint can tell one an earlier process issued.
 */
function issuedAt(sessionId: string): number | undefined {
  const hex = sessionId.replaceAll('-', '');
  if (!/^[0-9a-f]{12}7[0-9a-f]{19}$/i.test(hex)) return undefined;
  return Number.parseInt(hex.slice(0, 12), 16);
}

/** The revision a session resumed after a restart works in, when its request does not say. */
const RESUMED_REVISION = '2025-06-18';

/** The states of a call that has not ended. */
const LIVE = ['queued', 'inline', 'backgrounded'] as const;

/** The response, whose end (its body read, or cancelled) is told to `done`: a stream is open until then. */
function untilEnded(response: Response, done: () => void): Response {
  if (!response.body) {
    done();
    return response;
  }
  let ended = false;
  const end = () => {
    if (ended) return;
    ended = true;
    done();
  };
  const reader = response.body.getReader();
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const { done: finished, value } = await reader.read();
        if (finished) {
          end();
          controller.close();
        } else controller.enqueue(value);
      } catch (error) {
        end();
        controller.error(error);
      }
    },
    cancel(reason) {
      end();
      return reader.cancel(reason);
    },
  });
  return new Response(body, {
    status: response.status,
    statusText: response.statusText,
    headers: response.headers,
  });
}

type ServingBase = Pick<
  Serving,
  'runtime' | 'defaultMode' | 'backgroundControl' | 'pollIntervalMs' | 'retentionMs' | 'cursors'
>;

/**
 * 2025-11-25's sessions: `initialize` opens one, bound to the tenant that opened it; later requests
 * name it with `Mcp-Session-Id`. Another tenant's session is as unknown as one that never was.
 * Sessions nobody uses expire, and they are capped, so abandoned ones cannot exhaust the memory.
 */
export class LegacySessions {
  readonly #sessions = new Map<string, Session>();
  /** `initialize` requests being answered, per tenant and in all: sessions about to open. */
  readonly #opening = new Map<string, number>();
  #openingTotal = 0;
  readonly #ttlMs: number;
  readonly #perTenant: number;
  readonly #total: number;
  readonly #sweeper: ReturnType<typeof setInterval>;
  #lastSweep: number;
  /** When this endpoint began: a session id issued before it was an earlier process's. */
  readonly #startedAt = Date.now();

  constructor(
    private readonly base: ServingBase,
    private readonly info: ServerInfo,
    limits: SessionLimits,
    private readonly now: () => number,
    private readonly onError: (error: Error) => void,
    private readonly onIdleClosed: (closed: ClosedSession) => void = () => {},
  ) {
    this.#ttlMs = limits.ttlMs ?? DEFAULT_SESSION_TTL_MS;
    this.#perTenant = limits.perTenant ?? DEFAULT_SESSIONS_PER_TENANT;
    this.#total = limits.total ?? DEFAULT_SESSIONS;
    this.#lastSweep = now();
    this.#sweeper = setInterval(() => this.sweep(), Math.max(1_000, this.#ttlMs / 2));
    this.#sweeper.unref();
  }

  get size(): number {
    return this.#sessions.size;
  }

  /** Closes the sessions nobody used for the TTL. */
  sweep(): void {
    this.#lastSweep = this.now();
    for (const [id, session] of this.#sessions) {
      if (this.#lastSweep - session.lastUsed >= this.#ttlMs) this.#close(id, session);
    }
  }

  async handle(
    request: Request,
    scope: McpScope,
    parsedBody: unknown,
    authInfo: AuthInfo,
  ): Promise<Response> {
    if (this.now() - this.#lastSweep >= this.#ttlMs / 10) this.sweep();
    const sessionId = request.headers.get('mcp-session-id');
    const session = sessionId === null ? undefined : this.#sessions.get(sessionId);
    if (
      sessionId !== null &&
      !session &&
      this.#earlierProcess(sessionId) &&
      !isInitializeRequest(parsedBody)
    ) {
      return this.#resume(sessionId, request, scope, parsedBody, authInfo);
    }
    if (sessionId !== null && (!session || session.scope.tenant !== scope.tenant)) {
      return jsonRpcErrorResponse(404, -32001, 'Session not found');
    }
    if (!session) {
      if (request.method !== 'POST' || !isInitializeRequest(parsedBody)) {
        return jsonRpcErrorResponse(400, -32000, 'Bad Request: No valid session ID provided');
      }
      // Sessions being opened count too: a burst of `initialize` cannot pass the cap before the
      // first of them is open.
      const tenant = scope.tenant ?? '';
      if (!(await this.#roomFor(scope))) {
        return jsonRpcErrorResponse(
          429,
          -32000,
          `too many open MCP sessions, all busy (at most ${this.#perTenant} per tenant and ${this.#total} in all): end one with DELETE, or try again once one is idle`,
        );
      }
      try {
        const opened = await this.#open(scope);
        // The session is among the open ones once `initialize` is answered (or never, if it fails).
        return await this.#answer(opened, request, parsedBody, authInfo);
      } finally {
        this.#openingDone(tenant);
      }
    }
    session.lastUsed = this.now();
    return this.#answer(session, request, parsedBody, authInfo);
  }

  /** Whether a session id was issued by a process before this one (this one's are all known). */
  #earlierProcess(sessionId: string): boolean {
    const issued = issuedAt(sessionId);
    return issued !== undefined && issued < this.#startedAt;
  }

  /**
   * A session an earlier process opened (Baton restarted, or the client came to another process
   * behind the same endpoint), taken up under its id instead of answered 404: a client that does
   * not start a new session on 404, as the spec says it must (Gemini CLI 0.61.0), would fail every
   * call until its user restarts it. What the client said at its `initialize` is gone with that
   * process: the session works in the revision its requests name, with no capability declared.
   * The tenant is the request's own, as for any request.
   */
  async #resume(
    sessionId: string,
    request: Request,
    scope: McpScope,
    parsedBody: unknown,
    authInfo: AuthInfo,
  ): Promise<Response> {
    const tenant = scope.tenant ?? '';
    if (!(await this.#roomFor(scope))) {
      return jsonRpcErrorResponse(404, -32001, 'Session not found');
    }
    try {
      const resumed = await this.#open(scope, sessionId);
      const protocolVersion = request.headers.get('mcp-protocol-version') ?? RESUMED_REVISION;
      // What the client said when it opened the session, said again for it to this process.
      const post = (body: object, headers: Record<string, string> = {}) =>
        resumed.transport.handleRequest(
          new Request(request.url, {
            method: 'POST',
            headers: {
              'content-type': 'application/json',
              accept: 'application/json, text/event-stream',
              ...headers,
            },
            body: JSON.stringify(body),
          }),
          { parsedBody: body, authInfo },
        );
      const initialize = {
        jsonrpc: '2.0',
        id: 0,
        method: 'initialize',
        params: { protocolVersion, capabilities: {}, clientInfo: { name: 'resumed', version: '0' } },
      };
      await (await post(initialize)).body?.cancel();
      const initialized = { jsonrpc: '2.0', method: 'notifications/initialized' };
      await (await post(initialized, { 'mcp-session-id': sessionId })).body?.cancel();
      resumed.lastUsed = this.now();
      return await this.#answer(resumed, request, parsedBody, authInfo);
    } finally {
      this.#openingDone(tenant);
    }
  }

  async #answer(
    session: Session,
    request: Request,
    parsedBody: unknown,
    authInfo: AuthInfo,
  ): Promise<Response> {
    // A GET (the session's stream of notifications) keeps it busy until the stream ends; other
    // requests count while their handler runs (`Serving.activity`).
    if (request.method !== 'GET') return session.transport.handleRequest(request, { parsedBody, authInfo });
    session.open++;
    const done = () => {
      session.open--;
      session.lastUsed = this.now();
    };
    try {
      return untilEnded(await session.transport.handleRequest(request, { parsedBody, authInfo }), done);
    } catch (error) {
      done();
      throw error;
    }
  }

  /** A session counted as opening (see `#roomFor`) is open now, or never will be. */
  #openingDone(tenant: string): void {
    this.#openingTotal--;
    const left = (this.#opening.get(tenant) ?? 1) - 1;
    if (left === 0) this.#opening.delete(tenant);
    else this.#opening.set(tenant, left);
  }

  /** How many sessions are open or opening, for this tenant and in all. */
  #counts(tenant: string | undefined): { mine: number; all: number } {
    let mine = this.#opening.get(tenant ?? '') ?? 0;
    for (const open of this.#sessions.values()) if (open.scope.tenant === tenant) mine++;
    return { mine, all: this.#sessions.size + this.#openingTotal };
  }

  /**
   * Whether a new session of this scope fits, counted as opening when it does: at a cap, the least recently used idle session that
   * frees room (the tenant's, at the tenant's cap) is closed for it.
   */
  async #roomFor(scope: McpScope): Promise<boolean> {
    for (;;) {
      const { mine, all } = this.#counts(scope.tenant);
      const tenantFull = mine >= this.#perTenant;
      if (!tenantFull && all < this.#total) {
        // Counted as opening at once, before any other request is looked at.
        const tenant = scope.tenant ?? '';
        this.#opening.set(tenant, (this.#opening.get(tenant) ?? 0) + 1);
        this.#openingTotal++;
        return true;
      }
      const candidates = [...this.#sessions.entries()]
        .filter(([, session]) => session.open === 0 && (!tenantFull || session.scope.tenant === scope.tenant))
        .sort(([, a], [, b]) => a.lastUsed - b.lastUsed);
      let closed = false;
      for (const [id, session] of candidates) {
        if (!(await this.#idle(id, session))) continue;
        // Looked at while the store answered: it may have been used, or closed, meanwhile.
        if (this.#sessions.get(id) !== session || session.open > 0) continue;
        this.onIdleClosed({
          sessionId: id,
          tenant: session.scope.tenant,
          idleMs: this.now() - session.lastUsed,
        });
        this.#close(id, session);
        closed = true;
        break;
      }
      if (!closed) return false;
    }
  }

  /** Whether a session has no call that has not ended, made plainly or as a task. */
  async #idle(id: string, session: Session): Promise<boolean> {
    for (const prefix of [CALL_SESSIONS, TASK_SESSIONS]) {
      const page = await this.base.runtime.list({
        sessionId: session.scope.inside(prefix + id),
        status: [...LIVE],
        limit: 1,
      });
      if (page.calls.length > 0) return false;
    }
    return true;
  }

  /** Opens a session: a new one, or (`resumed`) one an earlier process opened, under its id. */
  async #open(scope: McpScope, resumed?: string): Promise<Session> {
    const held: Subscription[] = [];
    const transport: WebStandardStreamableHTTPServerTransport = new WebStandardStreamableHTTPServerTransport({
      // UUIDv7: the time in an id tells a later process that an earlier one issued it.
      sessionIdGenerator: () => resumed ?? uuidv7(),
      onsessioninitialized: (id) => {
        this.#sessions.set(id, session);
      },
    });
    const session: Session = { transport, scope, lastUsed: this.now(), held, open: 0 };
    const server = mcpServer(
      {
        ...this.base,
        scope,
        era: 'legacy',
        get sessionName() {
          return transport.sessionId ?? 'anonymous';
        },
        hold: (subscription) => held.push(subscription),
        activity: {
          begin: () => {
            session.open++;
          },
          end: () => {
            session.open--;
            session.lastUsed = this.now();
          },
        },
        notify: (method, params) => server.notification({ method, params } as never),
      },
      this.info,
    );
    transport.onclose = () => {
      for (const subscription of held.splice(0)) subscription.unsubscribe();
      if (transport.sessionId) this.#sessions.delete(transport.sessionId);
    };
    transport.onerror = this.onError;
    await server.connect(transport);
    return session;
  }

  #close(id: string, session: Session): void {
    this.#sessions.delete(id);
    session.transport.close().catch(this.onError);
  }

  async close(): Promise<void> {
    clearInterval(this.#sweeper);
    await Promise.all([...this.#sessions.values()].map(({ transport }) => transport.close()));
    this.#sessions.clear();
  }
}
