/**
 * Who asks the runtime for something: the one principal every way into a call (REST, MCP, A2A, a
 * bridge, the built-in tools) hands the runtime, which decides by it alone what the caller may
 * start, touch and see. A door authenticates each request and names its caller; it never decides.
 */
export interface Caller {
  /** Whose calls these are; undefined for the one tenant of a runtime without tenants. */
  readonly tenant?: string;
  /** The user inside its tenant (an OAuth subject apart from its tenant), when the credential names one. */
  readonly user?: string;
  /**
   * The OAuth scopes its credential carries. Undefined: it may call every tool (a static token, an
   * embedded runtime's trusted caller).
   */
  readonly scopes?: readonly string[];
  /** How the caller was authenticated. */
  readonly via: CallerKind;
}

/**
 * `trusted`: code that embeds the runtime and authenticates nobody (the default); `anonymous`: a
 * server without credentials; `token`: a static bearer token; `oauth`: an OAuth access token.
 */
export type CallerKind = 'trusted' | 'anonymous' | 'token' | 'oauth';

/** The caller of a request that names none: code that embeds the runtime, which may do everything. */
export const TRUSTED_CALLER: Caller = Object.freeze({ via: 'trusted' });

/** Whether the caller holds the scope (undefined: none is needed). */
export function holdsScope(caller: Caller, scope: string | undefined): boolean {
  return scope === undefined || caller.scopes === undefined || caller.scopes.includes(scope);
}
