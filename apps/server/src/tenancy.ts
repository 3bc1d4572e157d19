import { createHash } from 'node:crypto';
import type { Caller } from '@baton/contracts';
import { uuidv7 } from 'uuidv7';
import type { OAuthResourceServer } from './oauth.js';

/** The part of a user's ids after their tenant's: `~` and 22 characters of its subject's hash. */
export const USER_SEGMENT_CHARS = 24;

/** A user's segment of the ids (`tenant/~…/`): the same subject always has the same one. */
export function userSegmentOf(subject: string): string {
  return `~${createHash('sha256')
    .update(subject)
    .digest('base64url')
    .slice(0, USER_SEGMENT_CHARS - 2)}/`;
}

/**
 * One tenant's view of the runtime. Its call and session ids are kept under the prefix
 * `tenant/`, so another tenant's ids never resolve: a lookup of someone else's call finds nothing
 * (404, not 403), and the same `callId` sent by two tenants names two calls. Without tokens there
 * is one tenant whose prefix is empty, and ids are kept as they are given. A user of a tenant (an
 * OAuth token naming a subject apart from its tenant) has a prefix of its own inside the tenant's,
 * `tenant/~…/`: another user's ids do not resolve for it, while a view of the whole tenant (a
 * static token, or the tenant scope) sees every user's, under their segment.
 */
export class TenantScope {
  readonly prefix: string;
  /** Whose calls these are: the tenant, or its user (`tenant/~…`); undefined for the one anonymous tenant. */
  readonly owner: string | undefined;
  /** Who asks, as the runtime decides by it (see `Caller`). */
  readonly caller: Caller;

  /**
   * `scopes`: what an OAuth access token lets its caller do; undefined for a static token and the
   * anonymous tenant, which may do everything. `subject`: the user the scope is bound to, if any.
   */
  constructor(
    readonly tenant: string | undefined,
    readonly scopes?: ReadonlySet<string>,
    subject?: string,
  ) {
    const user = tenant !== undefined && subject !== undefined ? userSegmentOf(subject) : '';
    this.prefix = tenant === undefined ? '' : `${tenant}/${user}`;
    this.owner = tenant === undefined ? undefined : this.prefix.slice(0, -1);
    this.caller =
      tenant === undefined
        ? { via: 'anonymous' }
        : scopes === undefined
          ? { via: 'token', tenant }
          : {
              via: 'oauth',
              tenant,
              scopes: [...scopes],
              ...(user !== '' && subject !== undefined ? { user: subject } : {}),
            };
  }

  /** Whether the caller holds the scope (undefined: none is needed). */
  holds(scope: string | undefined): boolean {
    return scope === undefined || this.scopes === undefined || this.scopes.has(scope);
  }

  /** The id the runtime keeps for an id this tenant gave. */
  inside(id: string): string {
    return this.prefix + id;
  }

  /** A new call id: made here, so that it carries the prefix. */
  newCallId(): string {
    return this.inside(uuidv7());
  }

  /** The id this tenant sees for an id the runtime keeps. */
  outside(id: string): string {
    return id.startsWith(this.prefix) ? id.slice(this.prefix.length) : id;
  }

  owns(id: string): boolean {
    return id.startsWith(this.prefix);
  }

  /**
   * A copy of a record, reply, event or notification with its ids as this tenant sees them: in its
   * fields, and in what the model is told (an acknowledgement names the call by `call_id`).
   */
  show<T extends { callId?: string; sessionId?: string }>(value: T): T {
    if (this.prefix === '') return value;
    const shown: T & { output?: unknown; acknowledgement?: unknown } = { ...value };
    if (shown.callId !== undefined) shown.callId = this.outside(shown.callId);
    if (shown.sessionId !== undefined) shown.sessionId = this.outside(shown.sessionId);
    if ('output' in shown) shown.output = this.#withCallIdShown(shown.output);
    if ('acknowledgement' in shown) shown.acknowledgement = this.#withCallIdShown(shown.acknowledgement);
    return shown;
  }

  #withCallIdShown(told: unknown): unknown {
    if (typeof told !== 'object' || told === null || !('call_id' in told)) return told;
    const { call_id } = told;
    return typeof call_id === 'string' ? { ...told, call_id: this.outside(call_id) } : told;
  }
}

/** The tenant of an id the runtime keeps (`tenant/…`), for the runtime's per-tenant limits. */
export function tenantOfId(id: string): string {
  const slash = id.indexOf('/');
  return slash === -1 ? '' : id.slice(0, slash);
}

/** The token of an `Authorization: Bearer …` header. */
export function bearerOf(authorization: string | undefined): string | undefined {
  return /^Bearer (\S+)$/i.exec(authorization ?? '')?.[1];
}

/** Who a request is, or why it was refused (with the `WWW-Authenticate` that says how to ask). */
export type Authentication =
  | { scope: TenantScope }
  | { status: 401 | 503; code: 'unauthorized' | 'auth_unavailable'; message: string; challenge: string };

const NEEDS_A_TOKEN = 'a valid bearer token is required';

/**
 * Bearer tokens to tenants: static ones, and an OAuth issuer's access tokens (their tenant a
 * claim's value). Without either, every request is the one anonymous tenant.
 */
export class Tenancy {
  readonly #byToken: Map<string, TenantScope>;
  readonly #anonymous = new TenantScope(undefined);
  readonly #oauth: Pick<OAuthResourceServer, 'check' | 'challenge'> | undefined;
  readonly #tenantWideScope: string | undefined;

  /**
   * `tenantWideScope`: the OAuth scope that lets a user's token see its whole tenant; without it a
   * token whose subject is not its tenant sees that user's calls alone.
   */
  constructor(
    tokens: Record<string, string>,
    oauth?: Pick<OAuthResourceServer, 'check' | 'challenge'>,
    tenantWideScope?: string,
  ) {
    this.#byToken = new Map(
      Object.entries(tokens).map(([token, tenant]) => [token, new TenantScope(tenant)]),
    );
    this.#oauth = oauth;
    this.#tenantWideScope = tenantWideScope;
  }

  get authenticated(): boolean {
    return this.#byToken.size > 0 || this.#oauth !== undefined;
  }

  /** A request's tenant, by a static token or an OAuth access token; or its refusal. */
  async authenticate(authorization: string | undefined): Promise<Authentication> {
    const scope = this.scopeOf(authorization);
    if (scope) return { scope };
    const token = bearerOf(authorization);
    if (!this.#oauth)
      return { status: 401, code: 'unauthorized', message: NEEDS_A_TOKEN, challenge: 'Bearer' };
    if (token === undefined)
      return {
        status: 401,
        code: 'unauthorized',
        message: NEEDS_A_TOKEN,
        challenge: this.#oauth.challenge(),
      };
    const checked = await this.#oauth.check(token);
    if ('tenant' in checked) {
      const { tenant, subject, scopes } = checked;
      const tenantWide =
        subject === undefined ||
        subject === tenant ||
        (this.#tenantWideScope !== undefined && scopes.includes(this.#tenantWideScope));
      return { scope: new TenantScope(tenant, new Set(scopes), tenantWide ? undefined : subject) };
    }
    return checked.refused === 'unavailable'
      ? {
          status: 503,
          code: 'auth_unavailable',
          message: checked.description,
          challenge: this.#oauth.challenge(),
        }
      : {
          status: 401,
          code: 'unauthorized',
          message: checked.description,
          challenge: this.#oauth.challenge(checked),
        };
  }

  /**
   * The `WWW-Authenticate` of a refusal made elsewhere (MCP's handler): the OAuth metadata, and
   * whether the token given was refused. Undefined without OAuth.
   */
  challengeOf(authorization: string | undefined): string | undefined {
    if (!this.#oauth) return undefined;
    const given = bearerOf(authorization) !== undefined;
    return this.#oauth.challenge(
      given ? { description: 'the token is not valid for this server' } : undefined,
    );
  }

  /** The scope of a request's static token (or the anonymous tenant's); undefined when it names none. */
  scopeOf(authorization: string | undefined): TenantScope | undefined {
    if (!this.authenticated) return this.#anonymous;
    const token = bearerOf(authorization);
    return token === undefined ? undefined : this.#byToken.get(token);
  }
}
