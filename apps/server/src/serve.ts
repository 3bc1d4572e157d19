import { type AnyTool, toMcpTool } from '@baton/contracts';
import { BUILTIN_TOOLS } from '@baton/runtime';
import type { ServerConfig } from './config.js';
import { demoTools } from './demo-tools.js';
import { budgetsPastHostsWait } from './host-waits.js';
import { createLogger, type LogLevel } from './logger.js';
import { redactedLocation } from './redacted-location.js';
import { listenOn, retentionOf } from './served-runtime.js';
import { createServer } from './server.js';
import { stopOnSignals } from './stopping.js';
import { readyRuntime } from './store-wait.js';
import { loadServedModule, type ServedModule } from './tools-module.js';
import { LOOPBACK_HOSTS } from './web-safety.js';
import { webhookDestinations } from './webhooks.js';

/** Arguments that fit a tool's schema, for the sample `curl` of the banner: each required property, plainly. */
function sampleArgs(schema: {
  properties?: Record<string, { type?: unknown; default?: unknown }>;
  required?: string[];
}) {
  const samples: Record<string, unknown> = {
    string: 'hello',
    number: 1,
    integer: 1,
    boolean: true,
    array: [],
    object: {},
  };
  return Object.fromEntries(
    (schema.required ?? []).map((name) => {
      const property = schema.properties?.[name];
      return [name, property?.default ?? samples[String(property?.type)] ?? null];
    }),
  );
}

/**
 * The tool of the banner's sample `curl`: one that can answer the sample plainly, a read-only tool
 * first (it changes nothing and does not fail for being tried), then one that needs no approval;
 * the builtins last. Undefined without tools.
 */
export function toolToTry(tools: readonly AnyTool[]): AnyTool | undefined {
  const builtins = new Set<string>(BUILTIN_TOOLS);
  const rank = (tool: AnyTool) =>
    (builtins.has(tool.name) ? 4 : 0) +
    (tool.execution.readOnly ? 0 : 1) +
    (tool.execution.needsApproval === undefined ? 0 : 2);
  return [...tools].sort((a, b) => rank(a) - rank(b))[0];
}

/**
 * `baton serve`: the server over a module's tools (the demo tools without one), in the role `both`
 * (it runs its calls and, on PostgreSQL, clients') or `client` (it submits them to the workers).
 */
export async function serve(
  module: string | undefined,
  config: ServerConfig,
  init: boolean,
  level: LogLevel,
) {
  const log = createLogger(level);
  const served: ServedModule = module === undefined ? { tools: demoTools } : await loadServedModule(module);
  const runtime = await readyRuntime(served, config, { init, log, role: config.role });
  const authenticated = Object.keys(config.tokens).length > 0;
  const app = createServer({
    runtime,
    logger: log,
    tokens: config.tokens,
    operatorTokens: config.operatorTokens,
    webSafety: {
      // Without tokens, the loopback names and the one the server was told to listen on.
      allowedHosts:
        config.allowedHosts ??
        (authenticated ? undefined : [...LOOPBACK_HOSTS, config.host.replace(/^\[|\]$/g, '')]),
      ...(config.allowedOrigins ? { allowedOrigins: config.allowedOrigins } : {}),
    },
    mcp: { ...config.mcp, ...retentionOf(served, config) },
    ...(config.a2a === false ? { a2a: false } : {}),
    ...(config.oauth ? { oauth: config.oauth } : {}),
    ...(config.quotas ? { quotas: config.quotas } : {}),
    limits: {
      ...(config.streams?.perTenant ? { streamsPerTenant: config.streams.perTenant } : {}),
      ...(config.streams?.total ? { streams: config.streams.total } : {}),
    },
    ...(config.bodyShape ? { bodyShape: config.bodyShape } : {}),
    ...(config.requestTimeoutMs !== undefined ? { requestTimeoutMs: config.requestTimeoutMs } : {}),
    ...(config.publicUrl ? { publicUrl: config.publicUrl } : {}),
    ...(config.trustProxy !== undefined ? { trustProxy: config.trustProxy } : {}),
  });
  const address = await listenOn(app, config.host, config.port);
  // Before the banner: whoever reads it may stop the server at once (stdout to a pipe is synchronous).
  stopOnSignals(runtime, app, log, { drainMs: config.drainMs, stopping: 'no new calls (503)' });
  const tools = runtime.tools.names();
  log.info({ address, tools, store: redactedLocation(config.storePath), role: config.role }, 'started');
  const pastHosts = budgetsPastHostsWait(
    { inlineBudgetMs: config.inlineBudgetMs, defaultMode: runtime.defaultMode },
    runtime.tools.definitions(),
  );
  if (pastHosts) log.warn(pastHosts);
  const tenants = new Set(Object.values(config.tokens));
  const oauth = config.oauth && `OAuth access tokens of ${config.oauth.issuer}`;
  const operators =
    config.operatorTokens.length > 0
      ? '/metrics for operator tokens'
      : '/metrics for none (no operator token)';
  const access =
    tenants.size === 0
      ? (oauth ?? 'no tokens configured: no authentication, so listening on loopback only')
      : `bearer tokens for ${tenants.size} tenant(s), ${operators}${oauth ? `; ${oauth}` : ''}`;
  const first = toolToTry(runtime.tools.definitions());
  const webhooks = webhookDestinations(config);
  process.stdout.write(
    [
      `Baton is listening on ${address}`,
      `  API:        ${address}/v1/calls  (OpenAPI: ${address}/openapi.json)`,
      `  MCP:        ${address}/mcp`,
      ...(config.a2a === false
        ? []
        : [`  A2A:        ${address}/a2a  (card: ${address}/.well-known/agent-card.json)`]),
      `  inspector:  ${address}/inspector/`,
      `  metrics:    ${address}/metrics`,
      `  health:     ${address}/healthz`,
      `  store:      ${redactedLocation(config.storePath)}`,
      ...(config.role === 'client'
        ? ['  role:       client: its calls run on the workers (baton worker)']
        : []),
      `  access:     ${access}`,
      ...(webhooks ? [`  webhooks:   ${webhooks}`] : []),
      `  tools:      ${tools.join(', ')}`,
      ...(first
        ? [
            `  try:        curl -s ${address}/v1/calls -H 'content-type: application/json' \\`,
            `                -d '${JSON.stringify({ name: first.name, args: sampleArgs(toMcpTool(first).inputSchema), sessionId: 's1' })}'`,
          ]
        : []),
      '',
    ].join('\n'),
  );
}
