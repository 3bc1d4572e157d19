import {
  type CallRecord,
  isTerminalStatus,
  type JsonTextLimits,
  withSecretArgsRedacted,
} from '@baton/contracts';
import { callMachine, machineGraph } from '@baton/machine';
import type { Runtime } from '@baton/runtime';
import helmet from '@fastify/helmet';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { filter, firstValueFrom, map, take, takeWhile } from 'rxjs';
import type { z } from 'zod';
import { type A2aAgentOptions, mountA2a } from './a2a.js';
import { API, type Endpoint } from './api.js';
import { answerErrors, fail, notFound, takeJsonBodies } from './api-errors.js';
import { authenticationHook, publicRoutes } from './authentication.js';
import { sendMessage } from './call-messages.js';
import { type CallRefusal, drainingHook, refusalOf } from './call-refusals.js';
import { INSPECTOR_PAGES, mountInspector } from './inspector-pages.js';
import { type McpSessionOptions, mountMcp } from './mcp.js';
import { quotaRefusalCounter, refusalCounter, runtimeMetrics } from './metrics.js';
import { type OAuthOptions, OAuthResourceServer } from './oauth.js';
import { METADATA_ROUTES, mountResourceMetadata } from './oauth-metadata.js';
import { routeSchemaOf, swaggerOptions } from './openapi.js';
import { healthOf, metricsRefusal } from './operations.js';
import { type QuotaOptions, TenantQuotas } from './quotas.js';
import { SECURITY_HEADERS } from './security-headers.js';
import { resumeAfter, StreamLimits, streamEvents, untilLastEvent } from './sse.js';
import { Tenancy, type TenantScope } from './tenancy.js';
import { toolDeclarations } from './tool-declarations.js';
import { ToolScopes } from './tool-scopes.js';
import { type WebSafetyOptions, webSafetyHook } from './web-safety.js';
import { shownDelivery } from './webhooks.js';

export interface BatonPluginOptions {
  runtime: Runtime;
  /** Bearer token -> tenant. Without tokens every request is one anonymous tenant. */
  tokens?: Record<string, string>;
  /**
   * Bearer tokens of the operators: with tokens configured (these or tenants'), `/metrics`, which
   * counts every tenant's calls, answers only these. They name no tenant, so they reach no call.
   */
  operatorTokens?: readonly string[];
  /** Which hosts and origins browsers may reach the server by (see web-safety.ts). */
  webSafety?: WebSafetyOptions;
  /** Open event streams at once: per tenant (default 64) and in all (default 1,024). */
  limits?: { streamsPerTenant?: number; streams?: number };
  /** MCP sessions: their idle TTL and how many may be open. */
  mcp?: McpSessionOptions;
  /** OAuth 2.1: an issuer whose access tokens for this server's resource are taken beside `tokens`. */
  oauth?: OAuthOptions;
  /** The runtime as an A2A agent at `/a2a` (its card at `/.well-known/agent-card.json`); `false`: none. */
  a2a?: A2aAgentOptions | false;
  /**
   * How deep a JSON body may nest and how many keys and nested values it may hold, on REST and MCP
   * alike, read before it is parsed: past them the answer is 413 `payload_too_large`. Defaults
   * `DEFAULT_MAX_BODY_DEPTH` and `DEFAULT_MAX_BODY_KEYS` of `@baton/contracts`.
   */
  bodyShape?: JsonTextLimits;
  /** Each tenant's calls per minute (REST, MCP and A2A alike); past it, 429 `quota_exceeded`. `now`: the clock. */
  quotas?: QuotaOptions & { now?: () => number };
  /**
   * The server's URL as its clients reach it (`https://baton.example`), for the URLs it gives out
   * (the A2A agent card's endpoint). Default: the OAuth resource's origin when OAuth is on; else
   * the request's own scheme and host (Fastify's `trustProxy` decides whether forwarded headers count).
   */
  publicUrl?: string;
}

/** A request that comes while the server shuts down is told to come back after this long. */
export const RETRY_AFTER_SECONDS = 5;
export const DEFAULT_STREAMS_PER_TENANT = 64;
export const DEFAULT_STREAMS = 1_024;

/** What a part of a request is once its schema parsed it (the route runs only when all parts did). */
type Parsed<S> = z.output<NonNullable<S>>;

interface RouteInput<E extends Endpoint> {
  params: Parsed<E['params']>;
  query: Parsed<E['query']>;
  body: Parsed<E['body']>;
  scope: TenantScope;
  request: FastifyRequest;
  reply: FastifyReply;
}

/**
 * Baton's HTTP API over a runtime, as a Fastify plugin: REST, Server-Sent Events, Prometheus
 * metrics, OpenAPI, MCP and the inspector. Each tenant sees only its own calls. Mount it in an app
 * you have (`app.register(batonPlugin, { runtime, prefix: '/baton' })`), or take the whole server
 * from `createServer`. Its hooks, parsers and error handlers apply to its own routes only.
 */
export const batonPlugin: FastifyPluginAsync<BatonPluginOptions> = async (
  app,
  {
    runtime,
    tokens = {},
    operatorTokens = [],
    webSafety = {},
    limits = {},
    mcp = {},
    a2a = {},
    oauth,
    bodyShape = {},
    quotas = {},
    publicUrl,
  },
) => {
  // A load balancer's probe, the API's description, the inspector's page (which holds no data: it
  // asks for a token when the API wants one) and the OAuth metadata answer without a token.
  const isPublic = publicRoutes(app.prefix, [
    API.health.url,
    API.openapi.url,
    ...INSPECTOR_PAGES,
    ...METADATA_ROUTES,
  ]);
  /** MCP checks its token itself, and answers in JSON-RPC. */
  const SELF_AUTHENTICATED = `${app.prefix}/mcp`;
  const resourceServer = oauth && new OAuthResourceServer(oauth);
  const tenancy = new Tenancy(tokens, resourceServer, oauth?.tenantScope);
  if (resourceServer) mountResourceMetadata(app, resourceServer);
  const toolScopes = new ToolScopes(runtime.access, resourceServer);
  const operators = new Set(operatorTokens);
  const METRICS = `${app.prefix}${API.metrics.url}`;
  const scopes = new WeakMap<FastifyRequest, TenantScope>();

  await app.register(helmet, { ...SECURITY_HEADERS, enableCSPNonces: false });
  takeJsonBodies(app, bodyShape);
  app.addHook(
    'onRequest',
    webSafetyHook({ ...webSafety, authenticated: tenancy.authenticated, jsonRpc: [SELF_AUTHENTICATED] }),
  );
  app.addHook('onRequest', drainingHook(runtime, SELF_AUTHENTICATED, RETRY_AFTER_SECONDS));
  const routes = { isPublic, selfAuthenticated: new Set([SELF_AUTHENTICATED]), metrics: METRICS };
  app.addHook('onRequest', authenticationHook(tenancy, operators, routes, scopes));
  answerErrors(app, RETRY_AFTER_SECONDS);

  // The routes' schemas describe them in the OpenAPI document. The zod schemas in the API table
  // validate (all of a request's problems at once, in the API's format), and answers are sent as
  // they are: no second validation, and no serializer that would drop what the schema leaves open.
  app.setValidatorCompiler(() => (data) => ({ value: data }));
  app.setSerializerCompiler(() => (data) => JSON.stringify(data));
  // The document answers without a token: with authentication on it names no tool (each caller
  // reads the tools it may see at /v1/tools), so that a scope-gated tool is not shown to anyone.
  await app.register(
    swagger,
    swaggerOptions(() => (tenancy.authenticated ? [] : runtime.tools.definitions())),
  );
  await app.register(swaggerUi, { routePrefix: '/docs' });
  const names = new Map<Endpoint, string>(Object.entries(API).map(([name, endpoint]) => [endpoint, name]));

  /** Registers an endpoint of the API table: parses each part with its schema, or answers 400 naming each problem. */
  function route<E extends Endpoint>(endpoint: E, handler: (input: RouteInput<E>) => unknown) {
    app.route({
      method: endpoint.method,
      url: endpoint.url,
      schema: routeSchemaOf(
        names.get(endpoint) ?? endpoint.url,
        endpoint,
        isPublic(`${app.prefix}${endpoint.url}`),
      ),
      handler: async (request, reply) => {
        const issues: Array<{ path: string; message: string }> = [];
        const parse = (schema: z.ZodType | undefined, value: unknown) => {
          if (!schema) return undefined;
          const parsed = schema.safeParse(value ?? {});
          if (parsed.success) return parsed.data;
          for (const issue of parsed.error.issues) {
            issues.push({ path: issue.path.join('.'), message: issue.message });
          }
          return undefined;
        };
        const input = {
          params: parse(endpoint.params, request.params),
          query: parse(endpoint.query, request.query),
          body: parse(endpoint.body, request.body),
          scope: scopes.get(request) ?? (tenancy.scopeOf(undefined) as TenantScope),
          request,
          reply,
        } as RouteInput<E>;
        if (issues.length > 0)
          return fail(reply, 400, 'invalid_request', 'the request is not valid', { issues });
        return handler(input);
      },
    });
  }

  const streams = new StreamLimits(
    limits.streamsPerTenant ?? DEFAULT_STREAMS_PER_TENANT,
    limits.streams ?? DEFAULT_STREAMS,
  );

  /** An SSE stream, if the tenant and the server have room for one more; else 429. */
  function openStream(
    scope: TenantScope,
    request: FastifyRequest,
    reply: FastifyReply,
    messages: Parameters<typeof streamEvents>[2],
  ) {
    const release = streams.take(scope.tenant ?? '');
    if (!release) {
      return fail(
        reply,
        429,
        'too_many_streams',
        `too many open event streams (at most ${streams.maxPerTenant} per tenant and ${streams.maxTotal} in all): close one first`,
      );
    }
    streamEvents(request, reply, messages, release);
    return reply;
  }

  /** A call of this tenant, by the id the tenant gave: undefined (and 404 sent) when it has none. */
  async function callOf(scope: TenantScope, id: string, reply: FastifyReply) {
    const record = await runtime.get(scope.inside(id));
    if (!record) void notFound(reply);
    return record;
  }

  /**
   * A call the caller may read: its tenant's (else 404) and of a tool its scopes allow (else 403
   * with the challenge): what a call of a tool returned is as much the tool's as calling it.
   */
  async function readableCallOf(scope: TenantScope, id: string, reply: FastifyReply) {
    const record = await callOf(scope, id, reply);
    if (!record || toolScopes.refusal(scope, runtime.tools.get(record.toolName), reply)) return undefined;
    return record;
  }
  /** Whether the caller may see what calls of the tool returned (see `readableCallOf`). */
  const mayRead = (scope: TenantScope, toolName: string) =>
    !toolScopes.lacks(scope, runtime.tools.get(toolName));

  /** Whether a call has stored nothing after `after`. */
  async function nothingAfter(callId: string, after: number): Promise<boolean> {
    const next = runtime.follow({ callId, after }, { live: false }).pipe(take(1));
    return (await firstValueFrom(next, { defaultValue: undefined })) === undefined;
  }

  const metrics = runtimeMetrics(runtime);
  const refusals = refusalCounter(metrics);
  const queued = (tenant?: string) =>
    runtime.notifications.count({
      sessionPrefix: tenant === undefined ? '' : `${tenant}/`,
      status: 'queued',
    });
  const tenantQuotas = new TenantQuotas(quotas, quotas.now, quotaRefusalCounter(metrics), queued);
  // The runtime decides every caller's rights, whatever door its call comes by: the operator's
  // scopes for tools and the tenants' quota are its rules from now on.
  runtime.access.configure({
    ...(oauth?.toolScopes ? { toolScopes: oauth.toolScopes } : {}),
    ...(tenantQuotas.limits ? { quota: (caller) => tenantQuotas.take(caller.tenant) } : {}),
  });
  const refuse = (response: FastifyReply, refusal: CallRefusal, retryAfter: number, extra: object) => {
    if (refusal.code !== 'quota_exceeded') refusals.inc({ code: refusal.code });
    response.header('retry-after', String(retryAfter));
    return fail(response, refusal.status, refusal.code, refusal.message, extra);
  };

  // Up means the store takes a write and a read; a store that fails (or hangs) makes it a 503.
  route(API.health, async ({ request, reply }) => {
    const detailed = metricsRefusal(request.headers.authorization, tenancy, operators) === undefined;
    const health = await healthOf(runtime, detailed);
    // The issuer is not the server: while it is away, tokens already known (and static ones) still
    // work, so it is said here, not made a 503 that would take every server out of its pool.
    const issuer = resourceServer && (resourceServer.issuerHealth.reachable ? 'reachable' : 'unreachable');
    if (health.ok) return issuer ? { ...health.body, issuer } : health.body;
    app.log.error({ err: health.error }, 'the health check found the store failing');
    return fail(reply, 503, 'store_unavailable', health.message);
  });
  route(API.openapi, () => app.swagger());
  route(API.metrics, async ({ reply }) => reply.type(metrics.contentType).send(await metrics.metrics()));

  route(API.createCall, async ({ body, scope, reply: response }) => {
    // An id made here is new: the runtime need not ask the store whether a call has it.
    const freshId = body.callId === undefined;
    const reply = await runtime.call(
      {
        ...body,
        sessionId: scope.inside(body.sessionId),
        callId: body.callId === undefined ? scope.newCallId() : scope.inside(body.callId),
        caller: scope.caller,
      },
      { freshId },
    );
    // The runtime refused the caller: a tool its scopes do not allow, or past its quota.
    const error = reply.status === 'failed' ? reply.error : undefined;
    if (error?.code === 'insufficient_scope' && error.scope !== undefined)
      return toolScopes.forbid(response, body.name, error.scope);
    if (error?.code === 'quota_exceeded') {
      const retryAfter = error.retryAfterSeconds ?? RETRY_AFTER_SECONDS;
      return refuse(
        response,
        { status: 429, code: 'quota_exceeded', message: error.message },
        retryAfter,
        {},
      );
    }
    // A call that was not taken: its record could not be kept, or the server began to stop.
    const refusal = await refusalOf(runtime, reply);
    if (refusal === undefined) return scope.show(reply);
    return refuse(response, refusal, RETRY_AFTER_SECONDS, { callId: scope.outside(reply.callId) });
  });

  // A record as its tenant sees it, its tool's secret arguments redacted.
  const shownCall = (scope: TenantScope, record: CallRecord) =>
    scope.show(withSecretArgsRedacted(runtime.tools, record));
  route(API.listCalls, async ({ query, scope }) => {
    const { tool, sessionId, callId, ...filter } = query;
    if (callId !== undefined) {
      const record = await runtime.get(scope.inside(callId));
      const readable = record && scope.owns(record.callId) && mayRead(scope, record.toolName);
      return { calls: readable ? [shownCall(scope, record)] : [] };
    }
    const page = await runtime.list({
      ...filter,
      sessionPrefix: scope.prefix,
      ...(sessionId !== undefined ? { sessionId: scope.inside(sessionId) } : {}),
      ...(tool !== undefined ? { toolName: tool } : {}),
    });
    // A page may come back shorter than asked: its cursor still goes on from where the store stopped.
    const calls = page.calls.filter((call) => mayRead(scope, call.toolName));
    return { ...page, calls: calls.map((call) => shownCall(scope, call)) };
  });

  route(API.getCall, async ({ params, scope, reply }) => {
    const record = await readableCallOf(scope, params.id, reply);
    return record ? shownCall(scope, record) : reply;
  });

  route(API.callEvents, async ({ params, query, scope, request, reply }) => {
    const record = await readableCallOf(scope, params.id, reply);
    if (!record) return reply;
    const after = resumeAfter(request, query.after);
    if (after === undefined) return fail(reply, 400, 'invalid_request', 'Last-Event-ID must be an event id');
    const callId = scope.inside(params.id);
    // A call that ended, asked from after its last event (EventSource reconnects): 204 says stop.
    if (isTerminalStatus(record.status) && (await nothingAfter(callId, after))) return reply.code(204).send();
    return openStream(scope, request, reply, (ready) =>
      runtime.follow({ callId, after }, { ready }).pipe(
        takeWhile(untilLastEvent(record), true),
        map((event) => ({ id: event.seq, event: event.type, data: scope.show(event) })),
      ),
    );
  });

  route(API.sessionEvents, async ({ params, query, scope, request, reply }) => {
    const after = resumeAfter(request, query.after);
    if (after === undefined) return fail(reply, 400, 'invalid_request', 'Last-Event-ID must be an event id');
    return openStream(scope, request, reply, (ready) =>
      runtime.follow({ sessionId: scope.inside(params.id), after: after }, { ready }).pipe(
        filter(({ event }) => mayRead(scope, event.toolName)),
        map(({ position, event }) => ({ id: position, event: event.type, data: scope.show(event) })),
      ),
    );
  });

  route(API.allEvents, ({ scope, request, reply }) => {
    // Live only: a reader too slow for the bounded buffer is let go (see sse.ts).
    return openStream(scope, request, reply, () =>
      runtime.events$.pipe(
        filter((event) => scope.owns(event.callId) && mayRead(scope, event.toolName)),
        map((event) => ({ event: event.type, data: scope.show(event) })),
      ),
    );
  });

  route(API.machine, () => machineGraph(callMachine));

  // Touching a call needs its tool's scope, as calling it does: the runtime refuses it, and the
  // refusal is asked first here only to answer it with its challenge.
  route(API.cancelCall, async ({ params, scope, reply }) => {
    const record = await callOf(scope, params.id, reply);
    if (!record || toolScopes.refusal(scope, runtime.tools.get(record.toolName), reply)) return reply;
    return { cancelled: await runtime.cancel(record.callId, undefined, { caller: scope.caller }) };
  });

  route(API.steerCall, async ({ params, body, scope, reply, request }) => {
    const record = await callOf(scope, params.id, reply);
    if (!record || toolScopes.refusal(scope, runtime.tools.get(record.toolName), reply)) return reply;
    const header = request.headers['idempotency-key'];
    const idempotencyKey = body.idempotencyKey ?? (typeof header === 'string' ? header : undefined);
    return sendMessage(runtime, scope, params.id, body.message, reply, idempotencyKey);
  });

  // Deciding is running: it needs the tool's scope. Who decided what is logged: the approvals' audit.
  type Deciding = Pick<RouteInput<typeof API.approveCall>, 'params' | 'scope' | 'reply' | 'request'>;
  const decide = async ({ params, scope, reply, request }: Deciding, reason?: string) => {
    const record = await callOf(scope, params.id, reply);
    if (!record || toolScopes.refusal(scope, runtime.tools.get(record.toolName), reply)) return undefined;
    const approved = reason === undefined;
    const as = { caller: scope.caller };
    const decided = approved
      ? await runtime.inputs.approve(record.callId, as)
      : await runtime.inputs.reject(record.callId, reason, as);
    const by = scope.owner ?? '(anonymous)';
    if (decided) request.log.info({ callId: record.callId, by, approved }, 'approval decided');
    return decided;
  };
  route(API.approveCall, async (input) => {
    const approved = await decide(input);
    return approved === undefined ? input.reply : { approved };
  });
  route(API.rejectCall, async (input) => {
    const rejected = await decide(input, input.body.reason);
    return rejected === undefined ? input.reply : { rejected };
  });

  route(API.listNotifications, async ({ query, scope }) => {
    const notifications = await runtime.notifications.list({
      sessionPrefix: scope.prefix,
      limit: query.limit,
      ...(query.after !== undefined ? { after: query.after } : {}),
      ...(query.id !== undefined ? { id: query.id } : {}),
      ...(query.sessionId !== undefined ? { sessionId: scope.inside(query.sessionId) } : {}),
      ...(query.status !== undefined ? { status: query.status } : {}),
    });
    return notifications
      .filter((notification) => mayRead(scope, notification.toolName))
      .map((notification) => scope.show(notification));
  });

  route(API.ackNotification, async ({ params, scope, reply }) => {
    // Notification ids are the runtime's own: with tenants, one acknowledges only the queued
    // notifications of its own sessions, and any other id is unknown to it.
    if (scope.prefix !== '') {
      const own = await runtime.notifications.list({
        id: params.id,
        sessionPrefix: scope.prefix,
        status: 'queued',
      });
      if (own.length === 0) return notFound(reply, 'notification');
    }
    return { acknowledged: await runtime.notifications.ack(params.id) };
  });

  route(API.listWebhookDeliveries, async ({ query, scope }) => {
    const deliveries = await runtime.webhooks.list({
      sessionPrefix: scope.prefix,
      limit: query.limit,
      ...(query.status !== undefined ? { status: query.status } : {}),
      ...(query.sessionId !== undefined ? { sessionId: scope.inside(query.sessionId) } : {}),
      ...(query.callId !== undefined ? { callId: scope.inside(query.callId) } : {}),
    });
    return deliveries.map((delivery) => scope.show(shownDelivery(delivery)));
  });

  route(API.listTools, ({ query, scope }) =>
    toolDeclarations(
      toolScopes.visible(scope, runtime.tools.definitions()),
      query.format,
      runtime.defaultMode,
    ),
  );

  await mountMcp(app, runtime, tenancy, toolScopes, tenantQuotas, { ...mcp, bodyShape });
  const a2aCaller = {
    scopeOf: (r: FastifyRequest) => scopes.get(r),
    toolScopes,
    publicUrl: publicUrl ?? (oauth && new URL(oauth.resource).origin),
  };
  if (a2a !== false) await mountA2a(app, runtime, a2aCaller, a2a);
  await mountInspector(app);
};
