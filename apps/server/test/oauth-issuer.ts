import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, type JWK, SignJWT } from 'jose';
import Provider from 'oidc-provider';

export const CLIENT_ID = 'agent-one';
export const CLIENT_SECRET = 'a-secret-of-agent-one-0001';
export const SCOPE = 'tools';
/** The server's own client, for token introspection (RFC 7662). */
export const RESOURCE_SERVER_ID = 'baton-server';
export const RESOURCE_SERVER_SECRET = 'a-secret-of-the-resource-server-01';

/** A signing key of the issuer's: its private JWK, published (public part) in its JWKS. */
type PrivateKey = Awaited<ReturnType<typeof generateKeyPair>>['privateKey'];

export async function signingKey(kid: string): Promise<{ jwk: JWK; privateKey: PrivateKey }> {
  const { privateKey } = await generateKeyPair('ES256', { extractable: true });
  return { jwk: { ...(await exportJWK(privateKey)), kid, alg: 'ES256', use: 'sig' }, privateKey };
}

/** A free port of loopback, for a server whose URL must be known before it starts (its resource URL). */
export async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as AddressInfo;
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

/**
 * A real authorization server (`oidc-provider`) on loopback: client credentials, resource
 * indicators (RFC 8707) issuing access tokens for the resource asked for (`resource` by default),
 * JWTs or opaque ones (`accessTokenFormat`), and token introspection (RFC 7662) for the server's own
 * client. `rotate` makes it publish another key set (a key rotation) without a restart of the
 * server it issues for.
 */
/** A client of its own, for a caller of its own: what it may ask for, and claims its tokens carry. */
export interface IssuerClient {
  id: string;
  secret: string;
  scope: string;
  claims?: Record<string, string>;
}

export async function startIssuer(
  resource: string,
  keys: JWK[],
  {
    accessTokenFormat = 'jwt',
    clients = [],
  }: { accessTokenFormat?: 'jwt' | 'opaque'; clients?: readonly IssuerClient[] } = {},
) {
  const scopes = [...new Set([SCOPE, ...clients.flatMap((client) => client.scope.split(' '))])];
  const claimsOf = new Map(clients.map((client) => [client.id, client.claims ?? {}]));
  const http: Server = createServer();
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(http.address() as AddressInfo).port}`;
  const providerOf = (published: JWK[]) =>
    new Provider(issuer, {
      clients: [
        {
          client_id: CLIENT_ID,
          client_secret: CLIENT_SECRET,
          grant_types: ['client_credentials'],
          redirect_uris: [],
          response_types: [],
          scope: SCOPE,
          // The issuer signs with ES256 alone: a client's default (RS256) would be refused.
          id_token_signed_response_alg: 'ES256',
        },
        ...clients.map((client) => ({
          client_id: client.id,
          client_secret: client.secret,
          grant_types: ['client_credentials'],
          redirect_uris: [],
          response_types: [],
          scope: client.scope,
          id_token_signed_response_alg: 'ES256' as const,
        })),
        {
          client_id: RESOURCE_SERVER_ID,
          client_secret: RESOURCE_SERVER_SECRET,
          grant_types: [],
          redirect_uris: [],
          response_types: [],
          id_token_signed_response_alg: 'ES256',
        },
      ],
      scopes,
      jwks: { keys: published },
      // The claims that name a client's organisation (its tenant) in its access tokens.
      extraTokenClaims: (_context, token) => claimsOf.get(String(token.clientId)) ?? {},
      features: {
        devInteractions: { enabled: false },
        clientCredentials: { enabled: true },
        introspection: { enabled: true },
        resourceIndicators: {
          enabled: true,
          defaultResource: () => resource,
          useGrantedResource: () => true,
          getResourceServerInfo: (_context, indicator) => ({
            scope: scopes.join(' '),
            audience: indicator,
            accessTokenFormat,
            accessTokenTTL: 300,
            jwt: { sign: { alg: 'ES256' } },
          }),
        },
      },
    });
  let provider = providerOf(keys);
  http.on('request', (request, response) => provider.callback()(request, response));
  return {
    issuer,
    rotate: (published: JWK[]) => {
      provider = providerOf(published);
    },
    /**
     * An access token by the client credentials grant, as a machine client gets one (for
     * `resource`, or another; of the first client, or another, with its whole scope).
     */
    async token(
      forResource = resource,
      client: Pick<IssuerClient, 'id' | 'secret' | 'scope'> = {
        id: CLIENT_ID,
        secret: CLIENT_SECRET,
        scope: SCOPE,
      },
    ): Promise<string> {
      const response = await fetch(`${issuer}/token`, {
        method: 'POST',
        headers: {
          authorization: `Basic ${Buffer.from(`${client.id}:${client.secret}`).toString('base64')}`,
          'content-type': 'application/x-www-form-urlencoded',
        },
        body: new URLSearchParams({
          grant_type: 'client_credentials',
          scope: client.scope,
          resource: forResource,
        }),
      });
      const body = (await response.json()) as { access_token?: string; error?: string };
      if (!body.access_token) throw new Error(`no token: ${JSON.stringify(body)}`);
      return body.access_token;
    },
    close: async () => {
      http.closeAllConnections();
      await new Promise((resolve) => http.close(resolve));
    },
  };
}

/** A token signed here, as a forger or a misconfigured issuer would make one. */
export function forged(
  privateKey: PrivateKey,
  kid: string,
  claims: { iss: string; aud: string; exp?: number } & Record<string, unknown>,
) {
  const now = Math.floor(Date.now() / 1000);
  return new SignJWT({ client_id: CLIENT_ID, scope: SCOPE, ...claims })
    .setProtectedHeader({ alg: 'ES256', kid, typ: 'at+jwt' })
    .setIssuedAt(now - 10)
    .setExpirationTime(claims.exp ?? now + 300)
    .sign(privateKey);
}
