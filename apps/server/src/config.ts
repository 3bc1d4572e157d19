import { existsSync, readFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { BUILTIN_TOOLS, type BuiltinTool } from '@baton/runtime';
import { z } from 'zod';
import { placeholderProblem, withSecretFiles } from './config-secrets.js';
import { QuotaOptions, TenantQuota } from './quotas.js';

/** How long a server that is told to stop lets its live calls run on, by default. */
export const DEFAULT_DRAIN_MS = 30_000;

/** The roles of `baton serve`; a process that only runs calls is `baton worker`. */
export const SERVE_ROLES = ['both', 'client'] as const;

/** A tenant's name: the first part of every id the server keeps for it. */
export const TENANT_NAME = /^[A-Za-z0-9_-]{1,64}$/;

const Limits = z.strictObject({
  concurrency: z.number().int().positive(),
  maxQueued: z.number().int().positive(),
  backgroundPerSession: z.number().int().positive(),
  backgroundPerWorker: z.number().int().positive(),
  runningPerSession: z.number().int().positive(),
  runningPerTenant: z.number().int().positive(),
  waitingForWorkers: z.number().int().positive(),
  waitingForWorkersPerTenant: z.number().int().positive(),
});

/** Where a webhook goes, and its Standard Webhooks secret. */
const WebhookEndpoint = z.strictObject({
  url: z.url({ protocol: /^https?$/, error: 'expected an http:// or https:// URL' }),
  secret: z.string().regex(/^whsec_[A-Za-z0-9+/]+={0,2}$/, 'expected "whsec_" followed by base64'),
});

/** `baton.config.json` (or the file `BATON_CONFIG` names): every field optional, none unknown. */
const FileConfig = z.strictObject({
  host: z.string().min(1),
  port: z.number().int().min(0).max(65_535),
  /** A SQLite file, or a `postgres://` URL. */
  store: z.string().min(1),
  inlineBudgetMs: z.number().int().positive(),
  /** A client: how long a call waits for a worker to claim it before it goes to the background. */
  claimWaitMs: z.number().int().positive(),
  limits: Limits.partial(),
  /** Bearer token -> tenant. */
  tokens: z.record(z.string().min(16, 'a token needs at least 16 characters'), z.string().regex(TENANT_NAME)),
  /** Bearer tokens that `/metrics` answers once any token is configured; they reach no call. */
  operatorTokens: z.array(z.string().min(16, 'a token needs at least 16 characters')),
  /** Host names browsers may reach the server by (DNS rebinding); see web-safety.ts. */
  allowedHosts: z.array(z.string().min(1)),
  /** Origins besides the server's own whose pages may change state. */
  allowedOrigins: z.array(z.url()),
  /** The server's URL as its clients reach it, for the URLs it gives out (the A2A card). */
  publicUrl: z.url(),
  /** Whether the proxy in front's `X-Forwarded-*` headers say the request's scheme and host. */
  trustProxy: z.boolean(),
  /** Open event streams at once, per tenant and in all. */
  streams: z
    .strictObject({ perTenant: z.number().int().positive(), total: z.number().int().positive() })
    .partial(),
  /** Ended calls are removed this many days after they end (0: kept). Default 7. */
  retentionDays: z.number().min(0),
  /** On SIGTERM or SIGINT, how long the live calls may run on before they are handed over. Default 30 s. */
  drainMs: z.number().int().min(0),
  /** How long a store that cannot be reached is ridden out before a call fails for it. Default 15 s. */
  storeRetryMs: z.number().int().min(0),
  /** How long a start waits for a store that cannot be reached yet (0: not at all). Default 60 s. */
  storeWaitMs: z.number().int().min(0),
  /** How long a request may take to arrive, headers and body, before it is answered 408. Default 30 s. */
  requestTimeoutMs: z.number().int().positive(),
  /** How deep a JSON body may nest, and how many keys and nested values it may hold (413 past them). */
  bodies: z
    .strictObject({ maxDepth: z.number().int().positive(), maxKeys: z.number().int().positive() })
    .partial(),
  /**
   * `both` (default): the server runs its calls, and on PostgreSQL clients' too; `client`: it
   * submits them to the workers (`baton worker`) on PostgreSQL.
   */
  role: z.enum(SERVE_ROLES),
  /**
   * Built-in tools to serve beside the module's: `spawn_background`, and the background control
   * (`check_background`, `wait_background`, `cancel_background`, `list_background`) with which a
   * client that does not take tasks follows what it started.
   */
  builtins: z.array(z.enum(BUILTIN_TOOLS)),
  /**
   * Notifications POSTed to a webhook (Standard Webhooks), and which destinations beside public
   * addresses it may have: loopback is allowed when the server listens on loopback.
   */
  webhook: WebhookEndpoint.extend({
    allowPrivate: z.boolean(),
    allowLoopback: z.boolean(),
    /** The waits between attempts after the first, in ms (default Standard Webhooks' schedule). */
    retryScheduleMs: z.array(z.number().int().min(0)),
  }).partial(),
  /** With tokens: a tenant's own webhook, by tenant name; the others' go to `webhook`. */
  tenantWebhooks: z.record(z.string().regex(TENANT_NAME), WebhookEndpoint),
  /**
   * MCP: sessions' idle TTL, how many may be open per tenant and in all, and whether the
   * background-control tools are served to clients that take no tasks (default true).
   */
  mcp: z
    .strictObject({
      sessionTtlMs: z.number().int().positive(),
      sessionsPerTenant: z.number().int().positive(),
      sessions: z.number().int().positive(),
      backgroundControl: z.boolean(),
    })
    .partial(),
  /**
   * OAuth 2.1 (MCP's authorization): an issuer whose JWT access tokens for this server's
   * `resource` URL are taken beside `tokens`, the tenant a claim's value (default `sub`).
   */
  oauth: z.strictObject({
    issuer: z.url(),
    resource: z.url(),
    jwksUri: z.url().optional(),
    tenantClaim: z.string().min(1).optional(),
    tenantScope: z.string().min(1).optional(),
    /** Opaque access tokens asked of the issuer (RFC 7662) with the server's own client credentials. */
    introspection: z
      .strictObject({
        clientId: z.string().min(1),
        clientSecret: z.string().min(1),
        endpoint: z.url().optional(),
      })
      .optional(),
    algorithms: z.array(z.string().min(1)).optional(),
    scopes: z.array(z.string().min(1)).optional(),
    /** The scope each tool needs, by name, beside (or instead of) the tools' own. */
    toolScopes: z.record(z.string(), z.string().min(1)).optional(),
    /** False for an issuer whose access tokens do not say `typ: at+jwt` (Keycloak's say `JWT`). */
    requireAccessTokenType: z.boolean().optional(),
    /** How long one request to the issuer may take, in ms (default 5 s). */
    issuerTimeoutMs: z.number().int().positive().optional(),
  }),
  /** The runtime as an A2A agent at `/a2a`, its card at `/.well-known/agent-card.json` (default true). */
  a2a: z.boolean(),
  /** Each tenant's calls per minute (`tenants`: by name, beside every tenant's). */
  quotas: QuotaOptions.extend({ tenants: z.record(z.string().regex(TENANT_NAME), TenantQuota).optional() }),
});

const commaList = z.string().transform((list) =>
  list
    .split(',')
    .map((item) => item.trim())
    .filter(Boolean),
);

/** Environment variables win over the file. `BATON_TOKENS` is `tenant:token,tenant:token`. */
const EnvConfig = z.object({
  BATON_HOST: z.string().min(1).optional(),
  BATON_PORT: z.coerce.number().int().min(0).max(65_535).optional(),
  BATON_STORE: z.string().min(1).optional(),
  BATON_INLINE_BUDGET_MS: z.coerce.number().int().positive().optional(),
  BATON_CLAIM_WAIT_MS: z.coerce.number().int().positive().optional(),
  BATON_WAITING_FOR_WORKERS: z.coerce.number().int().positive().optional(),
  BATON_ALLOWED_HOSTS: commaList.optional(),
  BATON_RETENTION_DAYS: z.coerce.number().min(0).optional(),
  BATON_DRAIN_MS: z.coerce.number().int().min(0).optional(),
  BATON_STORE_RETRY_MS: z.coerce.number().int().min(0).optional(),
  BATON_STORE_WAIT_MS: z.coerce.number().int().min(0).optional(),
  BATON_REQUEST_TIMEOUT_MS: z.coerce.number().int().positive().optional(),
  BATON_MAX_BODY_DEPTH: z.coerce.number().int().positive().optional(),
  BATON_MAX_BODY_KEYS: z.coerce.number().int().positive().optional(),
  BATON_ROLE: z.enum(SERVE_ROLES).optional(),
  BATON_CONCURRENCY: z.coerce.number().int().positive().optional(),
  BATON_BUILTINS: commaList.pipe(z.array(z.enum(BUILTIN_TOOLS))).optional(),
  BATON_MCP_BACKGROUND_CONTROL: z.stringbool().optional(),
  BATON_A2A: z.stringbool().optional(),
  BATON_QUOTA_CALLS_PER_MINUTE: z.coerce.number().int().positive().optional(),
  BATON_OAUTH_ISSUER: z.url().optional(),
  BATON_OAUTH_RESOURCE: z.url().optional(),
  BATON_WEBHOOK_URL: WebhookEndpoint.shape.url.optional(),
  BATON_WEBHOOK_SECRET: WebhookEndpoint.shape.secret.optional(),
  BATON_WEBHOOK_ALLOW_PRIVATE: z.stringbool().optional(),
  BATON_WEBHOOK_ALLOW_LOOPBACK: z.stringbool().optional(),
  BATON_WEBHOOK_RETRY_SCHEDULE_MS: commaList
    .pipe(z.array(z.string().regex(/^\d+$/, 'expected a comma list of milliseconds').transform(Number)))
    .optional(),
  BATON_ALLOWED_ORIGINS: commaList.pipe(z.array(z.url())).optional(),
  BATON_PUBLIC_URL: z.url().optional(),
  BATON_TRUST_PROXY: z.stringbool().optional(),
  BATON_OPERATOR_TOKENS: commaList
    .pipe(z.array(z.string().min(16, 'a token needs at least 16 characters')))
    .optional(),
  BATON_TOKENS: z
    .string()
    .transform((list, ctx) => {
      const tokens: Record<string, string> = {};
      for (const pair of list.split(',').filter(Boolean)) {
        const [tenant = '', token = ''] = pair.split(':');
        if (!TENANT_NAME.test(tenant) || token.length < 16) {
          ctx.addIssue({
            code: 'custom',
            message:
              'expected tenant:token pairs, a tenant of letters, digits, _ or -, a token of 16+ characters',
          });
          return z.NEVER;
        }
        tokens[token] = tenant;
      }
      return tokens;
    })
    .optional(),
});

export interface ServerConfig {
  host: string;
  port: number;
  storePath: string;
  inlineBudgetMs: number;
  /** A client: how long a call waits to be claimed before it goes to the background; the runtime's default when unset. */
  claimWaitMs?: number;
  /** On SIGTERM or SIGINT: how long the live calls may run on before they are handed over. */
  drainMs: number;
  /** How long a store that cannot be reached is ridden out; the runtime's default when unset. */
  storeRetryMs?: number;
  /** How long a start waits for a store that cannot be reached yet; 60 s when unset. */
  storeWaitMs?: number;
  /** How long a request may take to arrive; the server's default (30 s) when unset. */
  requestTimeoutMs?: number;
  /** How deep a JSON body may nest and how many keys it may hold, when configured. */
  bodyShape?: { maxDepth?: number; maxKeys?: number };
  /** `both`, or `client` (its calls run on workers; PostgreSQL only). */
  role: (typeof SERVE_ROLES)[number];
  limits: Partial<z.infer<typeof Limits>>;
  /** Bearer token -> tenant; empty when the server has one anonymous tenant. */
  tokens: Record<string, string>;
  /** Bearer tokens for `/metrics`; empty when none is configured. */
  operatorTokens: string[];
  /** Set only when configured: the server's defaults are in web-safety.ts. */
  allowedHosts?: string[];
  allowedOrigins?: string[];
  /** The server's URL as its clients reach it, when configured. */
  publicUrl?: string;
  /** Whether forwarded headers are believed (a proxy in front), when configured. */
  trustProxy?: boolean;
  /** Open event streams at once, when configured; the defaults are in app.ts. */
  streams?: { perTenant?: number; total?: number };
  /** Days after their end that ended calls are removed (0: kept), when configured; main.ts defaults to 7. */
  retentionDays?: number;
  /** Built-in tools served beside the module's, when configured. */
  builtins?: BuiltinTool[];
  /** The OAuth issuer whose access tokens are taken, when configured. */
  oauth?: z.infer<typeof FileConfig>['oauth'];
  quotas?: QuotaOptions;
  /** False when the A2A agent is turned off. */
  a2a?: boolean;
  /** The server's webhook, when configured. */
  webhook?: {
    url: string;
    secret: string;
    retryScheduleMs?: number[];
  };
  /**
   * Which destinations beside public addresses every webhook may have, the server's and the
   * tenants' alike; unset, loopback is allowed when the server listens on loopback.
   */
  webhookAllow?: { private?: boolean; loopback?: boolean };
  /** Tenants' own webhooks, when configured. */
  tenantWebhooks?: Record<string, { url: string; secret: string }>;
  /** MCP sessions and background control, when configured; the defaults are `@baton/mcp`'s. */
  mcp?: { sessionTtlMs?: number; sessionsPerTenant?: number; sessions?: number; backgroundControl?: boolean };
}

export class ConfigError extends Error {
  override readonly name = 'ConfigError';
}

function problemsOf(error: z.ZodError, where: string): string {
  const problems = error.issues.map((issue) => `${issue.path.join('.') || '(root)'}: ${issue.message}`);
  return `bad configuration: ${where}${problems.join('; ')}`;
}

function readFile(path: string, required: boolean): Partial<z.infer<typeof FileConfig>> {
  if (!existsSync(path)) {
    if (required) throw new ConfigError(`bad configuration: BATON_CONFIG: ${path} does not exist`);
    return {};
  }
  let json: unknown;
  try {
    json = JSON.parse(readFileSync(path, 'utf8'));
  } catch (error) {
    throw new ConfigError(`bad configuration: ${path}: not JSON (${(error as Error).message})`);
  }
  const parsed = FileConfig.partial().safeParse(json);
  if (!parsed.success) throw new ConfigError(problemsOf(parsed.error, `${path}: `));
  return parsed.data;
}

/** The server's webhook: the file's, with what the environment sets instead; a URL needs its secret. */
function webhookOf(
  file: Partial<z.infer<typeof FileConfig>>['webhook'],
  env: z.infer<typeof EnvConfig>,
): ServerConfig['webhook'] {
  const url = env.BATON_WEBHOOK_URL ?? file?.url;
  const secret = env.BATON_WEBHOOK_SECRET ?? file?.secret;
  const retryScheduleMs = env.BATON_WEBHOOK_RETRY_SCHEDULE_MS ?? file?.retryScheduleMs;
  if (url === undefined && secret === undefined) return undefined;
  if (url === undefined || secret === undefined) {
    throw new ConfigError(
      `bad configuration: a webhook needs both its URL (--webhook-url, BATON_WEBHOOK_URL) and its secret (--webhook-secret, BATON_WEBHOOK_SECRET)`,
    );
  }
  return {
    url,
    secret,
    ...(retryScheduleMs !== undefined ? { retryScheduleMs } : {}),
  };
}

/** The OAuth issuer: the file's, with what the environment sets instead; an issuer needs its resource. */
function oauthOf(
  file: Partial<z.infer<typeof FileConfig>>['oauth'],
  env: z.infer<typeof EnvConfig>,
): ServerConfig['oauth'] {
  const issuer = env.BATON_OAUTH_ISSUER ?? file?.issuer;
  const resource = env.BATON_OAUTH_RESOURCE ?? file?.resource;
  if (issuer === undefined && resource === undefined) return undefined;
  if (issuer === undefined || resource === undefined) {
    throw new ConfigError(
      "bad configuration: OAuth needs both its issuer (BATON_OAUTH_ISSUER) and this server's resource URL (BATON_OAUTH_RESOURCE)",
    );
  }
  return { ...file, issuer, resource };
}

export function isLoopback(host: string): boolean {
  if (host === 'localhost') return true;
  if (isIP(host) === 4) return host.startsWith('127.');
  return host === '::1';
}

/**
 * The server's configuration: defaults, then the file, then the environment. A bad value stops the
 * start with a message naming it. Without tokens there is no authentication, so the server may
 * only listen on loopback.
 */
export function loadConfig(given: NodeJS.ProcessEnv, cwd = process.cwd()): ServerConfig {
  const secretsRead = withSecretFiles(given);
  if ('problem' in secretsRead) throw new ConfigError(secretsRead.problem);
  const { env } = secretsRead;
  const file = readFile(env.BATON_CONFIG ?? `${cwd}/baton.config.json`, env.BATON_CONFIG !== undefined);
  const parsed = EnvConfig.safeParse(env);
  if (!parsed.success) throw new ConfigError(problemsOf(parsed.error, ''));
  const fromEnv = parsed.data;
  const config: ServerConfig = {
    host: fromEnv.BATON_HOST ?? file.host ?? '127.0.0.1',
    port: fromEnv.BATON_PORT ?? file.port ?? 8787,
    storePath: fromEnv.BATON_STORE ?? file.store ?? './.baton/baton.db',
    inlineBudgetMs: fromEnv.BATON_INLINE_BUDGET_MS ?? file.inlineBudgetMs ?? 300,
    drainMs: fromEnv.BATON_DRAIN_MS ?? file.drainMs ?? DEFAULT_DRAIN_MS,
    role: fromEnv.BATON_ROLE ?? file.role ?? 'both',
    limits: {
      ...file.limits,
      ...(fromEnv.BATON_CONCURRENCY !== undefined ? { concurrency: fromEnv.BATON_CONCURRENCY } : {}),
      ...(fromEnv.BATON_WAITING_FOR_WORKERS !== undefined
        ? { waitingForWorkers: fromEnv.BATON_WAITING_FOR_WORKERS }
        : {}),
    },
    tokens: fromEnv.BATON_TOKENS ?? file.tokens ?? {},
    operatorTokens: fromEnv.BATON_OPERATOR_TOKENS ?? file.operatorTokens ?? [],
  };
  const storeRetryMs = fromEnv.BATON_STORE_RETRY_MS ?? file.storeRetryMs;
  if (storeRetryMs !== undefined) config.storeRetryMs = storeRetryMs;
  const claimWaitMs = fromEnv.BATON_CLAIM_WAIT_MS ?? file.claimWaitMs;
  if (claimWaitMs !== undefined) config.claimWaitMs = claimWaitMs;
  const storeWaitMs = fromEnv.BATON_STORE_WAIT_MS ?? file.storeWaitMs;
  if (storeWaitMs !== undefined) config.storeWaitMs = storeWaitMs;
  const requestTimeoutMs = fromEnv.BATON_REQUEST_TIMEOUT_MS ?? file.requestTimeoutMs;
  if (requestTimeoutMs !== undefined) config.requestTimeoutMs = requestTimeoutMs;
  const maxDepth = fromEnv.BATON_MAX_BODY_DEPTH ?? file.bodies?.maxDepth;
  const maxKeys = fromEnv.BATON_MAX_BODY_KEYS ?? file.bodies?.maxKeys;
  if (maxDepth !== undefined || maxKeys !== undefined) {
    config.bodyShape = {
      ...(maxDepth !== undefined ? { maxDepth } : {}),
      ...(maxKeys !== undefined ? { maxKeys } : {}),
    };
  }
  if (file.streams) config.streams = file.streams;
  if (file.mcp) config.mcp = file.mcp;
  if (fromEnv.BATON_MCP_BACKGROUND_CONTROL !== undefined) {
    config.mcp = { ...config.mcp, backgroundControl: fromEnv.BATON_MCP_BACKGROUND_CONTROL };
  }
  const oauth = oauthOf(file.oauth, fromEnv);
  if (oauth) config.oauth = oauth;
  const callsPerMinute = fromEnv.BATON_QUOTA_CALLS_PER_MINUTE ?? file.quotas?.callsPerMinute;
  if (file.quotas || callsPerMinute)
    config.quotas = { ...file.quotas, ...(callsPerMinute ? { callsPerMinute } : {}) };
  const a2a = fromEnv.BATON_A2A ?? file.a2a;
  if (a2a !== undefined) config.a2a = a2a;
  const builtins = fromEnv.BATON_BUILTINS ?? file.builtins;
  if (builtins) config.builtins = builtins;
  const webhook = webhookOf(file.webhook, fromEnv);
  if (webhook) config.webhook = webhook;
  const allowPrivate = fromEnv.BATON_WEBHOOK_ALLOW_PRIVATE ?? file.webhook?.allowPrivate;
  const allowLoopback = fromEnv.BATON_WEBHOOK_ALLOW_LOOPBACK ?? file.webhook?.allowLoopback;
  if (allowPrivate !== undefined || allowLoopback !== undefined) {
    config.webhookAllow = {
      ...(allowPrivate !== undefined ? { private: allowPrivate } : {}),
      ...(allowLoopback !== undefined ? { loopback: allowLoopback } : {}),
    };
  }
  if (file.tenantWebhooks) config.tenantWebhooks = file.tenantWebhooks;
  const retentionDays = fromEnv.BATON_RETENTION_DAYS ?? file.retentionDays;
  if (retentionDays !== undefined) config.retentionDays = retentionDays;
  const allowedHosts = fromEnv.BATON_ALLOWED_HOSTS ?? file.allowedHosts;
  if (allowedHosts) config.allowedHosts = allowedHosts;
  const allowedOrigins = fromEnv.BATON_ALLOWED_ORIGINS ?? file.allowedOrigins;
  if (allowedOrigins) config.allowedOrigins = allowedOrigins;
  const publicUrl = fromEnv.BATON_PUBLIC_URL ?? file.publicUrl;
  if (publicUrl) config.publicUrl = publicUrl;
  const trustProxy = fromEnv.BATON_TRUST_PROXY ?? file.trustProxy;
  if (trustProxy !== undefined) config.trustProxy = trustProxy;
  const placeholder = placeholderProblem(config);
  if (placeholder) throw new ConfigError(placeholder);
  if (Object.keys(config.tokens).length === 0 && !config.oauth && !isLoopback(config.host)) {
    throw new ConfigError(
      `bad configuration: host: ${config.host} is not a loopback address; without tokens the server has no authentication and listens on loopback only`,
    );
  }
  return config;
}
