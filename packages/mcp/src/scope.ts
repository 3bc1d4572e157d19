import { uuidv7 } from 'uuidv7';
import { jsonRpcErrorResponse } from './responses.js';

/**
 * Whose calls a request may see. Ids inside the runtime carry the tenant's prefix; ids shown to the
 * client do not. A tenant's task ids never resolve for another tenant: a lookup of someone else's
 * task finds nothing, as if it never was.
 */
export interface McpScope {
  /** Undefined for the one tenant of a server without tokens. */
  readonly tenant: string | undefined;
  /** The id the runtime keeps for an id this tenant gave. */
  inside(id: string): string;
  /** The id this tenant sees for an id the runtime keeps. */
  outside(id: string): string;
  /** A new call id, made inside the scope. */
  newCallId(): string;
  /**
   * What the caller lacks to see and call a tool: the OAuth scope, and the `WWW-Authenticate` that
   * asks for it (step-up); undefined when it may. Unset: every tool is the caller's.
   */
  lacks?(toolName: string): { scope: string; challenge: string } | undefined;
  /**
   * Takes one call of the caller's quota, or says why it may not and when it may: a `tools/call`
   * over it is answered 429 with `Retry-After` before it reaches the runtime. Unset: no quota.
   */
  takeCall?():
    | { message: string; retryAfterSeconds: number }
    | undefined
    | Promise<{ message: string; retryAfterSeconds: number } | undefined>;
}

/** The tool a single `tools/call` request names, or undefined for any other request. */
export function toolCallOf(body: unknown): string | undefined {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return undefined;
  const { method, params } = body as { method?: unknown; params?: { name?: unknown } };
  return method === 'tools/call' && typeof params?.name === 'string' ? params.name : undefined;
}

/**
 * A `tools/call` the caller may not make now, as its HTTP answer: 403 `insufficient_scope` for a
 * tool it lacks the scope of (the way MCP's authorization has clients step up), 429 past its quota.
 */
export async function toolCallRefusal(scope: McpScope, body: unknown): Promise<Response | undefined> {
  const name = toolCallOf(body);
  if (name === undefined) return undefined;
  const lacking = scope.lacks?.(name);
  if (lacking) {
    return jsonRpcErrorResponse(403, -32000, `Forbidden: the tool needs the scope ${lacking.scope}`, {
      'www-authenticate': lacking.challenge,
    });
  }
  const overQuota = await scope.takeCall?.();
  return overQuota
    ? jsonRpcErrorResponse(429, -32000, `Too many requests: ${overQuota.message}`, {
        'retry-after': String(overQuota.retryAfterSeconds),
      })
    : undefined;
}

/** The scope of a server with one tenant: ids are kept as they are given. */
export const SINGLE_TENANT: McpScope = {
  tenant: undefined,
  inside: (id) => id,
  outside: (id) => id,
  newCallId: () => uuidv7(),
};
