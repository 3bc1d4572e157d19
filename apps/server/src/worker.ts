import { DEFAULT_CONCURRENCY, type Runtime } from '@baton/runtime';
import Fastify, { type FastifyInstance } from 'fastify';
import type { ServerConfig } from './config.js';
import { demoTools } from './demo-tools.js';
import { createLogger, type LogLevel } from './logger.js';
import { runtimeMetrics } from './metrics.js';
import { healthOf, metricsRefusal } from './operations.js';
import { redactedLocation } from './redacted-location.js';
import { checkRole, listenOn } from './served-runtime.js';
import { stopOnSignals } from './stopping.js';
import { readyRuntime } from './store-wait.js';
import { Tenancy } from './tenancy.js';
import { loadServedModule, type ServedModule } from './tools-module.js';
import { LOOPBACK_HOSTS, webSafetyHook } from './web-safety.js';

/**
 * A worker's own HTTP face, for probes and scrapes only: `/healthz` (the store takes a write and a
 * read) and `/metrics` (an operator token once tokens are configured). It serves no call.
 */
export function workerHttp(runtime: Runtime, config: ServerConfig): FastifyInstance {
  const app = Fastify({ forceCloseConnections: true });
  const tenancy = new Tenancy(config.tokens);
  const operators = new Set(config.operatorTokens);
  app.addHook(
    'onRequest',
    webSafetyHook({
      allowedHosts:
        config.allowedHosts ??
        (tenancy.authenticated ? undefined : [...LOOPBACK_HOSTS, config.host.replace(/^\[|\]$/g, '')]),
      authenticated: tenancy.authenticated,
    }),
  );
  const metrics = runtimeMetrics(runtime);
  app.get('/healthz', async (request, reply) => {
    const detailed = metricsRefusal(request.headers.authorization, tenancy, operators) === undefined;
    const health = await healthOf(runtime, detailed);
    if (health.ok) return health.body;
    app.log.error({ err: health.error }, 'the health check found the store failing');
    return reply.code(503).send({ error: { code: 'store_unavailable', message: health.message } });
  });
  app.get('/metrics', async (request, reply) => {
    const refusal = metricsRefusal(request.headers.authorization, tenancy, operators);
    if (refusal) {
      return reply.code(refusal.status).send({ error: { code: refusal.code, message: refusal.message } });
    }
    return reply.type(metrics.contentType).send(await metrics.metrics());
  });
  app.setNotFoundHandler((request, reply) =>
    reply.code(404).send({
      error: {
        code: 'not_found',
        message: `no route ${request.method} ${request.url.split('?')[0]}: a worker serves /healthz and /metrics; calls go to a server (baton serve)`,
      },
    }),
  );
  return app;
}

/**
 * `baton worker`: runs the calls that clients (`baton serve --role client`, or runtimes in the role
 * `client`) submit to a PostgreSQL store, the module's tools (the demo tools without one). With a
 * port it answers probes and scrapes there. On SIGTERM or SIGINT it claims nothing more, lets its
 * calls finish for the drain, then hands the rest over to the other workers.
 */
export async function work(
  module: string | undefined,
  config: ServerConfig,
  { init, level, port }: { init: boolean; level: LogLevel; port: number | undefined },
): Promise<void> {
  checkRole('worker', config, 'baton worker');
  const log = createLogger(level);
  const served: ServedModule = module === undefined ? { tools: demoTools } : await loadServedModule(module);
  const runtime = await readyRuntime(served, config, { init, log, role: 'worker' });
  const app = port === undefined ? undefined : workerHttp(runtime, config);
  const address = app && port !== undefined ? await listenOn(app, config.host, port) : undefined;
  stopOnSignals(runtime, app, log, { drainMs: config.drainMs, stopping: 'no new calls claimed' });
  const tools = runtime.tools.names();
  const concurrency = config.limits.concurrency ?? DEFAULT_CONCURRENCY;
  log.info(
    {
      instanceId: runtime.instanceId,
      address,
      tools,
      concurrency,
      store: redactedLocation(config.storePath),
    },
    'worker started',
  );
  process.stdout.write(
    [
      `Baton worker ${runtime.instanceId} runs the calls clients submit`,
      `  store:        ${redactedLocation(config.storePath)}`,
      `  concurrency:  ${concurrency}`,
      `  tools:        ${tools.join(', ')}`,
      ...(address ? [`  health:       ${address}/healthz`, `  metrics:      ${address}/metrics`] : []),
      '',
    ].join('\n'),
  );
}
