import { uuidv7 } from 'uuidv7';

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
}

/**
 * A single `tools/call` of a tool the caller lacks the scope of: answered 403 `insufficient_scope`
 * before it reaches the server, the way MCP's authorization has clients step up.
 */
export function insufficientScopeOf(scope: McpScope, body: unknown) {
  if (!scope.lacks || typeof body !== 'object' || body === null || Array.isArray(body)) return undefined;
  const { method, params } = body as { method?: unknown; params?: { name?: unknown } };
  if (method !== 'tools/call' || typeof params?.name !== 'string') return undefined;
  return scope.lacks(params.name);
}

/** The scope of a server with one tenant: ids are kept as they are given. */
export const SINGLE_TENANT: McpScope = {
  tenant: undefined,
  inside: (id) => id,
  outside: (id) => id,
  newCallId: () => uuidv7(),
};
