import { type Caller, TRUSTED_CALLER } from '@baton/contracts';
import { BACKGROUND_CONTROL, type Runtime } from '@baton/runtime';
import type { ServerContext } from '@modelcontextprotocol/server';
import { uuidv7 } from 'uuidv7';
import { jsonRpcErrorResponse } from './responses.js';

/**
 * Whose calls a request may see, and who asks. Ids inside the runtime carry the tenant's prefix;
 * ids shown to the client do not. A tenant's task ids never resolve for another tenant: a lookup of
 * someone else's task finds nothing, as if it never was. A 2025-11-25 session is bound to the
 * owner that opened it (its ids); what a request may do is its own credential's, request by request.
 */
export interface McpScope {
  /** Whose calls: the tenant, or its user. Undefined for the one tenant of a server without tokens. */
  readonly tenant: string | undefined;
  /** The id the runtime keeps for an id this tenant gave. */
  inside(id: string): string;
  /** The id this tenant sees for an id the runtime keeps. */
  outside(id: string): string;
  /** A new call id, made inside the scope. */
  newCallId(): string;
  /**
   * Who asks, for the runtime to decide what it may see and call (its `access`). Unset: the
   * trusted caller, who may call every tool.
   */
  readonly caller?: Caller;
  /** The `WWW-Authenticate` that asks for a scope the caller lacks (step-up). Unset: `Bearer` with the scope. */
  challenge?(scope: string): string;
  /**
   * Whether the caller's quota lets no call in now, and when it will (without taking any: the
   * runtime takes one per call it starts). A single `tools/call` then is answered 429 with
   * `Retry-After` before it reaches the runtime. Unset: no quota here.
   */
  quotaRefusal?():
    | { message: string; retryAfterSeconds: number }
    | undefined
    | Promise<{ message: string; retryAfterSeconds: number } | undefined>;
}

/** The caller of a scope. */
export function callerOf(scope: Pick<McpScope, 'caller'>): Caller {
  return scope.caller ?? TRUSTED_CALLER;
}

/** The tool a single `tools/call` request names, or undefined for any other request. */
export function toolCallOf(body: unknown): string | undefined {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return undefined;
  const { method, params } = body as { method?: unknown; params?: { name?: unknown } };
  return method === 'tools/call' && typeof params?.name === 'string' ? params.name : undefined;
}

/**
 * A single `tools/call` the caller may not make now, as its HTTP answer, in the words of MCP's
 * authorization: 403 `insufficient_scope` with the challenge that asks for the scope (step-up),
 * 429 past its quota. The runtime decides; this only carries its answer out before the call is
 * made. A call in a batch is decided by the runtime when it is made, and refused alone (see
 * `accessError`).
 */
export async function toolCallRefusal(
  runtime: Pick<Runtime, 'access' | 'tools'>,
  scope: McpScope,
  body: unknown,
): Promise<Response | undefined> {
  const name = toolCallOf(body);
  if (name === undefined) return undefined;
  const lacking = runtime.access.lacks(callerOf(scope), runtime.tools.get(name));
  if (lacking !== undefined) {
    return jsonRpcErrorResponse(403, -32000, `Forbidden: the tool needs the scope ${lacking}`, {
      'www-authenticate':
        scope.challenge?.(lacking) ?? `Bearer error="insufficient_scope", scope="${lacking}"`,
    });
  }
  // A control tool (check, wait, cancel, steer) touches a call and starts none: no quota is asked.
  if ((BACKGROUND_CONTROL as readonly string[]).includes(name)) return undefined;
  const overQuota = await scope.quotaRefusal?.();
  return overQuota
    ? jsonRpcErrorResponse(429, -32000, `Too many requests: ${overQuota.message}`, {
        'retry-after': String(overQuota.retryAfterSeconds),
      })
    : undefined;
}

/** The scope rides the SDK's pass-through `authInfo` from each HTTP request to its handlers. */
export function requestScopeOf(
  context: Pick<ServerContext, 'http'> | undefined,
  fallback: McpScope,
): McpScope {
  return (context?.http?.authInfo?.extra?.scope as McpScope | undefined) ?? fallback;
}

/** The scope of a server with one tenant: ids are kept as they are given. */
export const SINGLE_TENANT: McpScope = {
  tenant: undefined,
  inside: (id) => id,
  outside: (id) => id,
  newCallId: () => uuidv7(),
};
