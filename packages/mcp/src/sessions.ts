import { randomUUID } from 'node:crypto';
import {
  type AuthInfo,
  isInitializeRequest,
  WebStandardStreamableHTTPServerTransport,
} from '@modelcontextprotocol/server';
import type { Subscription } from 'rxjs';
import { jsonRpcErrorResponse } from './responses.js';
import type { McpScope } from './scope.js';
import { mcpServer, type ServerInfo } from './server.js';
import type { Serving } from './serving.js';

export interface SessionLimits {
  /** A session unused this long is closed and forgotten. Default 30 minutes. */
  ttlMs?: number;
  /** Open sessions per tenant; past it `initialize` gets 429. Default 100. */
  perTenant?: number;
  /** Open sessions in all. Default 1,000. */
  total?: number;
}

export const DEFAULT_SESSION_TTL_MS = 30 * 60_000;
export const DEFAULT_SESSIONS_PER_TENANT = 100;
export const DEFAULT_SESSIONS = 1_000;

interface Session {
  transport: WebStandardStreamableHTTPServerTransport;
  scope: McpScope;
  lastUsed: number;
  held: Subscription[];
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

  constructor(
    private readonly base: ServingBase,
    private readonly info: ServerInfo,
    limits: SessionLimits,
    private readonly now: () => number,
    private readonly onError: (error: Error) => void,
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
      const opening = this.#opening.get(tenant) ?? 0;
      const mine =
        opening + [...this.#sessions.values()].filter((open) => open.scope.tenant === scope.tenant).length;
      if (mine >= this.#perTenant || this.#sessions.size + this.#openingTotal >= this.#total) {
        return jsonRpcErrorResponse(
          429,
          -32000,
          `too many open MCP sessions (at most ${this.#perTenant} per tenant and ${this.#total} in all): end one with DELETE, or wait for an idle one to expire`,
        );
      }
      this.#opening.set(tenant, opening + 1);
      this.#openingTotal++;
      try {
        const opened = await this.#open(scope);
        // The session is among the open ones once `initialize` is answered (or never, if it fails).
        return await opened.transport.handleRequest(request, { parsedBody, authInfo });
      } finally {
        this.#openingTotal--;
        const left = (this.#opening.get(tenant) ?? 1) - 1;
        if (left === 0) this.#opening.delete(tenant);
        else this.#opening.set(tenant, left);
      }
    }
    session.lastUsed = this.now();
    return session.transport.handleRequest(request, { parsedBody, authInfo });
  }

  async #open(scope: McpScope): Promise<Session> {
    const held: Subscription[] = [];
    const transport: WebStandardStreamableHTTPServerTransport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: randomUUID,
      onsessioninitialized: (id) => {
        this.#sessions.set(id, session);
      },
    });
    const session: Session = { transport, scope, lastUsed: this.now(), held };
    const server = mcpServer(
      {
        ...this.base,
        scope,
        era: 'legacy',
        get sessionName() {
          return transport.sessionId ?? 'anonymous';
        },
        hold: (subscription) => held.push(subscription),
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
