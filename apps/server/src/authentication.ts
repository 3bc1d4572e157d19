import type { FastifyReply, FastifyRequest } from 'fastify';
import { fail } from './api-errors.js';
import { metricsRefusal } from './operations.js';
import { bearerOf, type Tenancy, type TenantScope } from './tenancy.js';

/** Whether a route answers without a token: the given pages, and the docs page with its assets (Swagger UI). */
export function publicRoutes(prefix: string, pages: readonly string[]): (url: string) => boolean {
  const named = new Set(pages.map((url) => `${prefix}${url}`));
  const docs = `${prefix}/docs`;
  return (url) => named.has(url) || url === docs || url.startsWith(`${docs}/`);
}

export interface AuthenticationRoutes {
  /** Routes that answer without a token. */
  isPublic: (url: string) => boolean;
  /** Routes that check their token themselves (MCP answers in JSON-RPC). */
  selfAuthenticated: ReadonlySet<string>;
  /** `/metrics`, which operators' tokens read. */
  metrics: string;
}

/**
 * The `onRequest` hook that tells who a request is: its tenant's scope, kept in `scopes` for the
 * route; or a 401 that says how to authenticate (the OAuth metadata, when an issuer is
 * configured), a 403 for an operator's token where a tenant's is needed.
 */
export function authenticationHook(
  tenancy: Pick<Tenancy, 'authenticate' | 'authenticated' | 'scopeOf'>,
  operators: ReadonlySet<string>,
  routes: AuthenticationRoutes,
  scopes: WeakMap<FastifyRequest, TenantScope>,
) {
  return async (request: FastifyRequest, reply: FastifyReply) => {
    const url = request.routeOptions.url ?? '';
    if (routes.isPublic(url) || routes.selfAuthenticated.has(url)) return;
    const { authorization } = request.headers;
    if (url === routes.metrics) {
      const refusal = metricsRefusal(authorization, tenancy, operators);
      if (!refusal) return;
      if (refusal.status === 401) reply.header('www-authenticate', 'Bearer');
      return fail(reply, refusal.status, refusal.code, refusal.message);
    }
    const bearer = bearerOf(authorization);
    if (bearer !== undefined && operators.has(bearer) && !tenancy.scopeOf(authorization)) {
      return fail(reply, 403, 'forbidden', "an operator token names no tenant: calls need a tenant's token");
    }
    const authentication = await tenancy.authenticate(authorization);
    if (!('scope' in authentication)) {
      reply.header('www-authenticate', authentication.challenge);
      return fail(reply, authentication.status, authentication.code, authentication.message);
    }
    scopes.set(request, authentication.scope);
  };
}
