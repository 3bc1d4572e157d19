import {
  createRemoteJWKSet,
  customFetch,
  errors,
  type JWTPayload,
  type JWTVerifyGetKey,
  jwtVerify,
} from 'jose';
import { DEFAULT_ISSUER_TIMEOUT_MS, type IssuerHealth, IssuerRequests } from './issuer-requests.js';
import { type IntrospectionOptions, TokenIntrospection } from './token-introspection.js';

/** The server as an OAuth 2.1 resource server (MCP's authorization): whose tokens it takes. */
export interface OAuthOptions {
  /** The authorization server's issuer: its metadata (RFC 8414, or OpenID Connect discovery) names its keys. */
  issuer: string;
  /**
   * This server's resource URL (RFC 8707, RFC 9728), e.g. `https://baton.example/`: the audience
   * every token must name. A token issued for another service is refused, never passed on.
   */
  resource: string;
  /** The issuer's keys, when it publishes no metadata. */
  jwksUri?: string;
  /** The claim whose value is the caller's tenant (letters, digits, `_` or `-`). Default `sub`. */
  tenantClaim?: string;
  /**
   * The scope that lets a user's token (one whose `sub` is not its tenant) see and control every
   * call of its tenant; without it, such a token reaches its own user's calls alone.
   */
  tenantScope?: string;
  /** The signature algorithms taken. Default RS256, PS256, ES256 and EdDSA (never `none`). */
  algorithms?: string[];
  /** The skew allowed on `exp` and `nbf`, in seconds. Default 30. */
  clockToleranceSeconds?: number;
  /** The scopes the metadata names. */
  scopes?: string[];
  /** The scope each tool needs, by name, for tools whose definition names none (or to name another). */
  toolScopes?: Record<string, string>;
  /** How soon the keys are fetched again for a token signed by a key not among them, in ms. Default 30 s. */
  keysCooldownMs?: number;
  /**
   * Opaque access tokens (not JWTs) are asked of the issuer by token introspection (RFC 7662),
   * with these client credentials. Unset: only JWT access tokens are taken.
   */
  introspection?: IntrospectionOptions;
  /**
   * Whether a JWT must say it is an access token, `typ: at+jwt`, as RFC 9068 §4 requires (so that
   * an ID token the issuer signed for this audience is not taken as one). Default true. Set it
   * false for an issuer that signs access tokens without that `typ`: a token whose `typ` names
   * another kind, or that carries an ID token's claims (`nonce`, `at_hash`, `c_hash`), is still refused.
   */
  requireAccessTokenType?: boolean;
  /** How long one request to the issuer may take, in ms. Default 5 s; past it the caller is answered 503. */
  issuerTimeoutMs?: number;
}

/** A token taken: its tenant and what it may do; or why it was not. */
export type TokenCheck =
  | { tenant: string; subject: string | undefined; scopes: string[] }
  | { refused: 'invalid_token' | 'unavailable'; description: string };

const DEFAULT_ALGORITHMS = ['RS256', 'PS256', 'ES256', 'EdDSA'];
const TENANT_NAME = /^[A-Za-z0-9_-]{1,64}$/;
/** A JWS in compact form: three base64url parts. Anything else is an opaque token. */
const JWT_SHAPE = /^[\w-]+\.[\w-]+\.[\w-]*$/;

/** Where RFC 9728 puts a resource's metadata: the well-known name between its host and its path. */
export function metadataUrlOf(resource: string): string {
  const url = new URL(resource);
  const path = url.pathname === '/' ? '' : url.pathname.replace(/\/$/, '');
  return `${url.origin}/.well-known/oauth-protected-resource${path}`;
}

/** The issuer's metadata: OAuth's (RFC 8414) first, then OpenID Connect's. */
async function issuerMetadataOf(
  issuer: string,
  fetch: IssuerRequests['fetch'],
): Promise<Record<string, unknown>> {
  const url = new URL(issuer);
  const path = url.pathname === '/' ? '' : url.pathname.replace(/\/$/, '');
  const candidates = [
    `${url.origin}/.well-known/oauth-authorization-server${path}`,
    `${issuer.replace(/\/$/, '')}/.well-known/openid-configuration`,
  ];
  const problems: string[] = [];
  for (const candidate of candidates) {
    const response = await fetch(candidate, { headers: { accept: 'application/json' } });
    if (!response.ok) {
      problems.push(`${candidate}: ${response.status}`);
      continue;
    }
    const metadata = (await response.json()) as Record<string, unknown>;
    // RFC 8414 §3.3: metadata that names another issuer is not this issuer's.
    if (metadata.issuer !== issuer)
      throw new Error(`${candidate} names the issuer ${String(metadata.issuer)}`);
    return metadata;
  }
  throw new Error(`no metadata for the issuer ${issuer} (${problems.join(', ')})`);
}

/**
 * Checks the JWT access tokens of one issuer for this server (jose): signature by one of the
 * issuer's keys (fetched again when a token names a key not among them: a rotation), `iss`, `aud`
 * equal to the resource, `exp` and `nbf` within the skew, an algorithm allowed.
 */
export class OAuthResourceServer {
  readonly metadataUrl: string;
  readonly #options: OAuthOptions;
  #keys: Promise<JWTVerifyGetKey> | undefined;
  #issuerMetadata: Promise<Record<string, unknown>> | undefined;
  readonly #introspection: TokenIntrospection | undefined;
  readonly #requests: IssuerRequests;

  constructor(options: OAuthOptions) {
    this.#options = options;
    this.metadataUrl = metadataUrlOf(options.resource);
    this.#requests = new IssuerRequests(options.issuerTimeoutMs);
    this.#introspection =
      options.introspection &&
      new TokenIntrospection(
        options.introspection,
        () => this.#named('introspection_endpoint'),
        this.#requests.fetch,
      );
  }

  /** Whether the issuer answered the last time it was asked (`/healthz` says so). */
  get issuerHealth(): IssuerHealth {
    return this.#requests.health;
  }

  /** A URL the issuer's metadata names (read once; read again after a failure). */
  async #named(field: 'jwks_uri' | 'introspection_endpoint'): Promise<string> {
    this.#issuerMetadata ??= issuerMetadataOf(this.#options.issuer, this.#requests.fetch);
    const metadata = await this.#issuerMetadata.catch((error: unknown) => {
      this.#issuerMetadata = undefined;
      throw error;
    });
    const url = metadata[field];
    if (typeof url !== 'string') throw new Error(`the issuer's metadata names no ${field}`);
    return url;
  }

  /** Protected Resource Metadata (RFC 9728). */
  metadata() {
    const { resource, issuer, scopes } = this.#options;
    return {
      resource,
      authorization_servers: [issuer],
      bearer_methods_supported: ['header'],
      ...(scopes ? { scopes_supported: scopes } : {}),
    };
  }

  /** The `WWW-Authenticate` of a refusal: where the metadata is, and what was wrong with the token given. */
  challenge(refusal?: { description: string }): string {
    const named = `Bearer resource_metadata="${this.metadataUrl}"`;
    if (!refusal) return named;
    return `${named}, error="invalid_token", error_description="${refusal.description.replaceAll('"', "'")}"`;
  }

  /** The `WWW-Authenticate` of a 403 for a scope the token lacks: step-up, as MCP clients read it. */
  insufficientScope(scope: string): string {
    return `Bearer error="insufficient_scope", scope="${scope}", resource_metadata="${this.metadataUrl}"`;
  }

  async check(token: string): Promise<TokenCheck> {
    if (this.#introspection && !JWT_SHAPE.test(token)) return this.#introspected(this.#introspection, token);
    let keys: JWTVerifyGetKey;
    try {
      keys = await this.#keySet();
    } catch (error) {
      this.#keys = undefined;
      return {
        refused: 'unavailable',
        description: `the issuer's keys cannot be read: ${(error as Error).message}`,
      };
    }
    const { issuer, resource, algorithms = DEFAULT_ALGORITHMS, clockToleranceSeconds = 30 } = this.#options;
    const typed = this.#options.requireAccessTokenType !== false;
    try {
      const { payload, protectedHeader } = await jwtVerify(token, keys, {
        issuer,
        audience: resource,
        algorithms,
        clockTolerance: clockToleranceSeconds,
        // RFC 9068 §2.2: an access token always says when it expires.
        requiredClaims: ['exp'],
        ...(typed ? { typ: 'at+jwt' } : {}),
      });
      const notAccess = typed ? undefined : notAnAccessToken(protectedHeader.typ, payload);
      return notAccess ? { refused: 'invalid_token', description: notAccess } : this.#taken(payload);
    } catch (error) {
      if (error instanceof errors.JWKSTimeout || error instanceof errors.JWKSInvalid)
        return { refused: 'unavailable', description: `the issuer's keys cannot be read: ${error.message}` };
      if (error instanceof errors.JOSEError)
        return { refused: 'invalid_token', description: describe(error) };
      // The keys' fetch failed (bounded by IssuerRequests): the issuer, not the token.
      return {
        refused: 'unavailable',
        description: `the issuer's keys cannot be read: ${(error as Error).message}`,
      };
    }
  }

  /** A token's claims, checked and taken: its tenant, its user, its scopes. */
  #taken(claims: Record<string, unknown>): TokenCheck {
    const claim = this.#options.tenantClaim ?? 'sub';
    const tenant = claims[claim];
    if (typeof tenant !== 'string' || !TENANT_NAME.test(tenant)) {
      return { refused: 'invalid_token', description: `the token's ${claim} claim is not a tenant name` };
    }
    const scope = typeof claims.scope === 'string' ? claims.scope : '';
    const subject = typeof claims.sub === 'string' ? claims.sub : undefined;
    return { tenant, subject, scopes: scope.split(' ').filter(Boolean) };
  }

  /** An opaque token, as the issuer's introspection tells it: active, for this server, unexpired. */
  async #introspected(introspection: TokenIntrospection, token: string): Promise<TokenCheck> {
    let claims: Awaited<ReturnType<TokenIntrospection['claimsOf']>>;
    try {
      claims = await introspection.claimsOf(token);
    } catch (error) {
      // The issuer is down, its metadata names no endpoint, or it answered other than RFC 7662 says.
      return { refused: 'unavailable', description: (error as Error).message };
    }
    if (!claims)
      return { refused: 'invalid_token', description: 'the token is not active (the issuer says so)' };
    const { issuer, resource, clockToleranceSeconds = 30 } = this.#options;
    if (claims.iss !== issuer)
      return {
        refused: 'invalid_token',
        description: 'the token was not issued by the configured issuer (iss)',
      };
    const audiences = Array.isArray(claims.aud) ? claims.aud : [claims.aud];
    if (!audiences.includes(resource))
      return { refused: 'invalid_token', description: 'the token was not issued for this server (aud)' };
    // An answer that says nothing of when the token expires would let it live for ever.
    if (typeof claims.exp !== 'number')
      return { refused: 'invalid_token', description: 'the issuer did not say when the token expires (exp)' };
    if (claims.exp + clockToleranceSeconds < Date.now() / 1_000)
      return { refused: 'invalid_token', description: 'the token has expired' };
    return this.#taken(claims);
  }

  #keySet(): Promise<JWTVerifyGetKey> {
    this.#keys ??= (async () => {
      const uri = this.#options.jwksUri ?? (await this.#named('jwks_uri'));
      return createRemoteJWKSet(new URL(uri), {
        cooldownDuration: this.#options.keysCooldownMs ?? 30_000,
        timeoutDuration: this.#options.issuerTimeoutMs ?? DEFAULT_ISSUER_TIMEOUT_MS,
        [customFetch]: this.#requests.fetch,
      });
    })();
    return this.#keys;
  }
}

/** The claims only an ID token carries (OpenID Connect Core §2, §3.1.3.6, §3.3.2.11). */
const ID_TOKEN_CLAIMS = ['nonce', 'at_hash', 'c_hash'];

/**
 * Why a JWT taken without `typ: at+jwt` is still not an access token: a `typ` that names another
 * kind, or an ID token's claims. Undefined when it may be one.
 */
function notAnAccessToken(typ: string | undefined, payload: JWTPayload): string | undefined {
  const kind = typ?.toLowerCase().replace(/^application\//, '');
  if (kind !== undefined && kind !== 'at+jwt' && kind !== 'jwt')
    return `the token's typ (${typ}) is not an access token's`;
  const idClaim = ID_TOKEN_CLAIMS.find((claim) => claim in payload);
  return idClaim === undefined
    ? undefined
    : `the token carries ${idClaim}: it is an ID token, not an access token`;
}

/** What a refused token is told, in words that name the check that failed. */
function describe(error: InstanceType<typeof errors.JOSEError>): string {
  if (error instanceof errors.JWTExpired) return 'the token has expired';
  if (error instanceof errors.JWTClaimValidationFailed) {
    if (error.claim === 'exp') return 'the token does not say when it expires (exp)';
    if (error.claim === 'typ') return 'the token is not an access token (its typ is not at+jwt)';
    if (error.claim === 'aud') return 'the token was not issued for this server (aud)';
    if (error.claim === 'iss') return 'the token was not issued by the configured issuer (iss)';
    return `the token's ${error.claim} claim is not valid now`;
  }
  if (error instanceof errors.JWKSNoMatchingKey) return "the token is not signed by one of the issuer's keys";
  if (error instanceof errors.JOSEAlgNotAllowed) return "the token's algorithm is not allowed";
  if (error instanceof errors.JWSSignatureVerificationFailed) return "the token's signature does not verify";
  return 'the token is not a valid JWT access token';
}

/** Where the server publishes its Protected Resource Metadata, and under the resource's path (RFC 9728 §3.1). */
export const PROTECTED_RESOURCE_PATH = '/.well-known/oauth-protected-resource';
