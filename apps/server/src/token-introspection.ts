import { createHash } from 'node:crypto';

/** How the server asks its issuer about an opaque access token (RFC 7662), as a client of its own. */
export interface IntrospectionOptions {
  clientId: string;
  clientSecret: string;
  /** Default: the issuer's metadata's `introspection_endpoint`. */
  endpoint?: string;
}

/** What the issuer said of an active token: its claims. */
export type IntrospectedClaims = Record<string, unknown> & { active: true };

/** An active token's answer is kept this long at most (and never past its `exp`). */
const KEPT_MS = 60_000;
/**
 * An inactive token's answer is kept this long: a client that retries a made-up or revoked token
 * costs the issuer one request, not one each time.
 */
const INACTIVE_KEPT_MS = 30_000;
/** Answers kept at once; past it, the oldest go. */
const MAX_KEPT = 10_000;

/** The issuer could not be asked (it is down, or answered other than RFC 7662 says). */
export class IntrospectionUnavailable extends Error {}

/**
 * Token introspection (RFC 7662) for access tokens that are not JWTs: the issuer is asked, with the
 * server's own client credentials, whether the token is active and what it holds. An active answer
 * is kept for a minute at most (never past the token's `exp`), and an inactive one for 30 s, under
 * the token's hash, so that a client's calls do not each cost the issuer a request. The requests
 * themselves are bounded in time and number (`IssuerRequests`).
 */
export class TokenIntrospection {
  readonly #options: IntrospectionOptions;
  readonly #endpoint: () => Promise<string>;
  readonly #fetch: typeof fetch;
  readonly #now: () => number;
  readonly #kept = new Map<string, { claims: IntrospectedClaims | undefined; until: number }>();

  constructor(
    options: IntrospectionOptions,
    endpoint: () => Promise<string>,
    fetchOf: (url: string | URL, init?: RequestInit) => Promise<Response> = fetch,
    now: () => number = Date.now,
  ) {
    this.#options = options;
    this.#endpoint = endpoint;
    this.#fetch = fetchOf as typeof fetch;
    this.#now = now;
  }

  /** The token's claims when the issuer says it is active; undefined when it is not. */
  async claimsOf(token: string): Promise<IntrospectedClaims | undefined> {
    const key = createHash('sha256').update(token).digest('base64url');
    const now = this.#now();
    const kept = this.#kept.get(key);
    if (kept && kept.until > now) return kept.claims;
    this.#kept.delete(key);
    const claims = await this.#ask(token);
    const expiresAt = typeof claims?.exp === 'number' ? claims.exp * 1_000 : Number.POSITIVE_INFINITY;
    const until = claims === undefined ? now + INACTIVE_KEPT_MS : Math.min(now + KEPT_MS, expiresAt);
    this.#kept.set(key, { claims, until });
    for (const oldest of this.#kept.keys()) {
      if (this.#kept.size <= MAX_KEPT) break;
      this.#kept.delete(oldest);
    }
    return claims;
  }

  async #ask(token: string): Promise<IntrospectedClaims | undefined> {
    const endpoint = this.#options.endpoint ?? (await this.#endpoint());
    const { clientId, clientSecret } = this.#options;
    // RFC 6749 §2.3.1: the client's id and secret are form-encoded before they are joined.
    const basic = Buffer.from(`${encodeURIComponent(clientId)}:${encodeURIComponent(clientSecret)}`).toString(
      'base64',
    );
    let response: Response;
    try {
      response = await this.#fetch(endpoint, {
        method: 'POST',
        headers: {
          authorization: `Basic ${basic}`,
          'content-type': 'application/x-www-form-urlencoded',
          accept: 'application/json',
        },
        body: new URLSearchParams({ token, token_type_hint: 'access_token' }),
      });
    } catch (error) {
      throw new IntrospectionUnavailable(
        `the introspection endpoint cannot be reached: ${(error as Error).message}`,
      );
    }
    if (!response.ok)
      throw new IntrospectionUnavailable(`the introspection endpoint answered ${response.status}`);
    const answer = (await response.json().catch(() => undefined)) as { active?: unknown } | undefined;
    if (typeof answer?.active !== 'boolean') {
      throw new IntrospectionUnavailable(
        'the introspection endpoint did not say whether the token is active',
      );
    }
    return answer.active ? (answer as IntrospectedClaims) : undefined;
  }
}
