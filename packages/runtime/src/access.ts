import { type AnyTool, BatonError, type CallError, type Caller, holdsScope } from '@baton/contracts';
import { insufficientScopeMessage } from './messages.js';

/** Why a caller's quota lets no more calls in now, and when one more is let in. */
export interface QuotaRefusal {
  message: string;
  retryAfterSeconds: number;
}

/**
 * Takes one call of the caller's quota, or says why it may not. The runtime asks once per call
 * it starts (a call of a batch, a `spawn_background` run, each firing of a schedule), after the
 * call's arguments were found valid, before anything of it is kept.
 */
export type QuotaTaker = (caller: Caller) => QuotaRefusal | undefined | Promise<QuotaRefusal | undefined>;

/** `createRuntime({ access })`: the rules the runtime decides every caller's requests by. */
export interface AccessOptions {
  /** The scope a tool needs, by its name, over the tool's own `scope` (an operator's mapping). */
  toolScopes?: Readonly<Record<string, string>>;
  /** Each tenant's quota. Unset: none. */
  quota?: QuotaTaker;
}

/**
 * The one place that decides what a caller may do, whatever way its request came in: which tools
 * it may see and call (its credential's scopes against the tool's), and how many calls its quota
 * lets it start. Every door presents the caller and carries out the answer in its protocol's words.
 */
export class Access {
  #toolScopes: Readonly<Record<string, string>>;
  #quota: QuotaTaker | undefined;

  constructor({ toolScopes = {}, quota }: AccessOptions = {}) {
    this.#toolScopes = toolScopes;
    this.#quota = quota;
  }

  /**
   * Rules given by what serves the runtime (a server's operator mapping and its tenants' quota),
   * before it serves: the runtime keeps deciding alone, by them. A quota can be set once; a
   * mapping adds to the one given, and may not name again a tool it names.
   */
  configure({ toolScopes = {}, quota }: AccessOptions): void {
    const again = Object.keys(toolScopes).filter((name) => Object.hasOwn(this.#toolScopes, name));
    if (again.length > 0) {
      throw new BatonError('invalid_definition', `the scope of ${again.join(', ')} is set already`);
    }
    if (quota && this.#quota) throw new BatonError('invalid_definition', 'a quota is set already');
    this.#toolScopes = { ...this.#toolScopes, ...toolScopes };
    if (quota) this.#quota = quota;
  }

  /** The scope a caller needs to see, call, steer, cancel or approve calls of the tool; undefined: none. */
  scopeOf(tool: Pick<AnyTool, 'name' | 'scope'>): string | undefined {
    return Object.hasOwn(this.#toolScopes, tool.name) ? this.#toolScopes[tool.name] : tool.scope;
  }

  /** The scope the caller lacks for the tool, or undefined when it may (an unknown tool needs none). */
  lacks(caller: Caller, tool: Pick<AnyTool, 'name' | 'scope'> | undefined): string | undefined {
    const needed = tool && this.scopeOf(tool);
    return holdsScope(caller, needed) ? undefined : needed;
  }

  /** The tools the caller may see. */
  visible<T extends Pick<AnyTool, 'name' | 'scope'>>(caller: Caller, tools: readonly T[]): T[] {
    return tools.filter((tool) => this.lacks(caller, tool) === undefined);
  }

  /** The caller's refusal for the tool, as a call's error; undefined when it may. */
  scopeRefusal(caller: Caller, tool: Pick<AnyTool, 'name' | 'scope'> | undefined): CallError | undefined {
    const scope = tool && this.lacks(caller, tool);
    if (scope === undefined || !tool) return undefined;
    return { code: 'insufficient_scope', message: insufficientScopeMessage(tool.name, scope), scope };
  }

  /** Whether a quota is set: without one, nothing is awaited per call. */
  get hasQuota(): boolean {
    return this.#quota !== undefined;
  }

  /** Takes one call of the caller's quota: its refusal as a call's error, or undefined. */
  async takeQuota(caller: Caller): Promise<CallError | undefined> {
    const refusal = await this.#quota?.(caller);
    if (!refusal) return undefined;
    return { code: 'quota_exceeded', message: refusal.message, retryAfterSeconds: refusal.retryAfterSeconds };
  }
}

/**
 * What a record keeps of its caller: its fields alone, and nothing for one that names no tenant,
 * user or scopes (the trusted caller, a server's anonymous one), whose rights are everyone's.
 */
export function keptCaller(caller: Caller | undefined): Caller | undefined {
  if (!caller || (caller.tenant === undefined && caller.user === undefined && caller.scopes === undefined)) {
    return undefined;
  }
  const { tenant, user, scopes, via } = caller;
  return {
    via,
    ...(tenant !== undefined ? { tenant } : {}),
    ...(user !== undefined ? { user } : {}),
    ...(scopes !== undefined ? { scopes: [...scopes] } : {}),
  };
}
