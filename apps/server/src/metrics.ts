import { type CallEvent, endOf, isBatonError } from '@baton/contracts';
import type { Runtime } from '@baton/runtime';
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';

type LiveState = 'queued' | 'inline' | 'backgrounded';

/** The `tool` label of calls to names no tool has (refused with `tool_not_found`). */
export const UNREGISTERED_TOOL = '(unregistered)';

/** A driver's own code for an error: Node's `ECONNREFUSED`, a PostgreSQL SQLSTATE, `SQLITE_BUSY`. */
function driverCode(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && /^[A-Z0-9_]{2,40}$/.test(code) ? code : undefined;
}

/**
 * The kind of a failure's error, as a label from a bounded set: the driver's code of what the
 * store failed with (a store's errors are `persistence_failed` with the driver's as their cause),
 * else a Baton error's code, else `other`.
 */
export function kindOf(error: unknown): string {
  if (!isBatonError(error)) return driverCode(error) ?? 'other';
  return driverCode(error.cause) ?? error.code;
}

/** The state a live call is in after an event, from the state it was in. */
function nextState(state: LiveState | undefined, event: CallEvent): LiveState | undefined {
  switch (event.type) {
    case 'queued':
      return 'queued';
    case 'started':
      return state === 'backgrounded' ? 'backgrounded' : 'inline';
    case 'backgrounded':
      return 'backgrounded';
    default:
      return state;
  }
}

/** Counts the calls a server refuses on POST, by the API's code (`baton_calls_refused_total`). */
export function refusalCounter(registry: Registry): Counter<'code'> {
  return new Counter({
    name: 'baton_calls_refused_total',
    help: 'Calls the server refused before taking them, by code: overloaded and quota_exceeded (429), shutting_down and store_unavailable (503).',
    labelNames: ['code'],
    registers: [registry],
  });
}

/** Tenants the quota refusals name; past them, the rest are counted as `(other)`. */
const MAX_TENANT_LABELS = 1_000;

/** Counts a call refused over its tenant's quota, by tenant (the one tenant of a server without tokens is ''). */
export function quotaRefusalCounter(registry: Registry): (tenant: string | undefined) => void {
  const counter = new Counter({
    name: 'baton_quota_refusals_total',
    help: "Calls refused over their tenant's quota (429 quota_exceeded), by tenant; past 1,000 tenants, the rest as (other).",
    labelNames: ['tenant'],
    registers: [registry],
  });
  const named = new Set<string>();
  return (tenant = '') => {
    if (!named.has(tenant) && named.size < MAX_TENANT_LABELS) named.add(tenant);
    counter.inc({ tenant: named.has(tenant) ? tenant : '(other)' });
  };
}

/**
 * Prometheus metrics of a runtime, for `GET /metrics`: the live calls of this process by state,
 * the ended calls by status and tool, how long calls took, the queue depth, promotions, retries,
 * calls waiting for approval, pending notifications, webhook deliveries and attempts, store write
 * latency, the failures the runtime handled, and Node's process metrics.
 */
export function runtimeMetrics(runtime: Runtime): Registry {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  /** Only registered names become labels: a caller who asks for 2,000 made-up tools makes one series. */
  const toolOf = (event: CallEvent) =>
    runtime.tools.has(event.toolName) ? event.toolName : UNREGISTERED_TOOL;
  const promotions = new Counter({
    name: 'baton_promotions_total',
    help: 'Calls answered `backgrounded` when their inline budget passed, by tool.',
    labelNames: ['tool'],
    registers: [registry],
  });
  const retries = new Counter({
    name: 'baton_retries_total',
    help: 'Attempts that failed and run again under their retry policy, by tool.',
    labelNames: ['tool'],
    registers: [registry],
  });
  const awaitingApproval = new Set<string>();
  new Gauge({
    name: 'baton_calls_awaiting_approval',
    help: 'Calls of this process waiting for their approval.',
    registers: [registry],
    collect() {
      this.set(awaitingApproval.size);
    },
  });
  const failures = new Counter({
    name: 'baton_runtime_failures_total',
    help: "Failures the runtime caught and handled (a store away, a refused write), by what it was doing and the error's kind: the driver's code (ECONNREFUSED, a SQLSTATE such as 57P01, SQLITE_BUSY), else its Baton code, else other.",
    labelNames: ['op', 'kind'],
    registers: [registry],
  });
  runtime.failures$.subscribe(({ op, error }) => failures.inc({ op, kind: kindOf(error) }));
  const live = new Map<string, { state: LiveState; queuedAt: number }>();
  new Gauge({
    name: 'baton_calls',
    help: 'Calls of this process that have not ended, by state.',
    labelNames: ['state'],
    registers: [registry],
    collect() {
      const counts: Record<LiveState, number> = { queued: 0, inline: 0, backgrounded: 0 };
      for (const { state } of live.values()) counts[state]++;
      for (const [state, count] of Object.entries(counts)) this.set({ state }, count);
    },
  });
  const ended = new Counter({
    name: 'baton_calls_ended_total',
    help: 'Calls that ended, by final status and tool.',
    labelNames: ['status', 'tool'],
    registers: [registry],
  });
  const startWait = new Histogram({
    name: 'baton_call_start_wait_seconds',
    help: "From a call's admission to its first start here: the wait for a worker's claim and a free slot, by tool.",
    labelNames: ['tool'],
    buckets: [0.001, 0.005, 0.025, 0.1, 0.3, 1, 3, 10, 30, 120],
    registers: [registry],
  });
  const duration = new Histogram({
    name: 'baton_call_duration_seconds',
    help: 'From admission to the end of a call, by final status and tool.',
    labelNames: ['status', 'tool'],
    buckets: [0.005, 0.025, 0.1, 0.3, 1, 3, 10, 30, 120, 600],
    registers: [registry],
  });
  new Gauge({
    name: 'baton_queue_depth',
    help: 'Calls admitted and waiting for a slot.',
    registers: [registry],
    collect() {
      this.set(runtime.stats().queued);
    },
  });
  new Gauge({
    name: 'baton_calls_waiting_for_workers',
    help: 'A client: calls it waits for workers to answer (past limits.waitingForWorkers, new ones get 429).',
    registers: [registry],
    collect() {
      this.set(runtime.stats().waitingForWorkers);
    },
  });

  new Gauge({
    name: 'baton_store_queue_depth',
    help: 'Calls in the store waiting for a worker to claim them (every process).',
    registers: [registry],
    async collect() {
      try {
        this.set((await runtime.queueDepth()).calls);
      } catch (error) {
        failures.inc({ op: 'read_queue_depth', kind: kindOf(error) });
      }
    },
  });
  new Gauge({
    name: 'baton_store_oldest_queued_seconds',
    help: 'How long the oldest call waiting for a worker has waited (0 when none waits).',
    registers: [registry],
    async collect() {
      try {
        const { oldestCreatedAt } = await runtime.queueDepth();
        this.set(oldestCreatedAt === undefined ? 0 : Math.max(0, Date.now() - oldestCreatedAt) / 1_000);
      } catch (error) {
        failures.inc({ op: 'read_queue_depth', kind: kindOf(error) });
      }
    },
  });

  new Gauge({
    name: 'baton_store_connections',
    help: "The store's connections to its database, by state: in_use, idle, and waiting (queries waiting for one: the pool is full). PostgreSQL only.",
    labelNames: ['state'],
    registers: [registry],
    collect() {
      const connections = runtime.storeConnections();
      if (!connections) return;
      this.set({ state: 'in_use' }, connections.inUse);
      this.set({ state: 'idle' }, connections.idle);
      this.set({ state: 'waiting' }, connections.waiting);
    },
  });

  const storeWrites = new Histogram({
    name: 'baton_store_write_duration_seconds',
    help: 'How long the store took to write one batch of changes (group commit), by whether it took them.',
    labelNames: ['outcome'],
    buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1],
    registers: [registry],
  });
  runtime.storeWrites$.subscribe(({ durationMs, ok }) =>
    storeWrites.observe({ outcome: ok ? 'written' : 'refused' }, durationMs / 1_000),
  );
  new Gauge({
    name: 'baton_notifications_pending',
    help: 'Notifications of ended background calls not yet acknowledged, in the store (every process).',
    registers: [registry],
    async collect() {
      // A store that is away must not take the other metrics with it: the gauge keeps its last
      // value, and the failure is counted with the runtime's.
      try {
        this.set(await runtime.notifications.count({ status: 'queued' }));
      } catch (error) {
        failures.inc({ op: 'count_notifications', kind: kindOf(error) });
      }
    },
  });

  new Gauge({
    name: 'baton_webhook_deliveries',
    help: 'Webhook deliveries in the store (every process), by status: pending, delivered, failed.',
    labelNames: ['status'],
    registers: [registry],
    async collect() {
      try {
        for (const status of ['pending', 'delivered', 'failed'] as const) {
          this.set({ status }, await runtime.webhooks.count({ status }));
        }
      } catch (error) {
        failures.inc({ op: 'count_webhook_deliveries', kind: kindOf(error) });
      }
    },
  });
  const webhookAttempts = new Counter({
    name: 'baton_webhook_attempts_total',
    help: 'Webhook attempts this process made, by what they left the delivery: pending (to be tried again), delivered, failed.',
    labelNames: ['status'],
    registers: [registry],
  });
  runtime.webhooks.attempts$.subscribe(({ status }) => webhookAttempts.inc({ status }));

  runtime.events$.subscribe((event) => {
    if (event.type === 'backgrounded') {
      if (event.reason === 'budget') promotions.inc({ tool: toolOf(event) });
      if (event.reason === 'approval') awaitingApproval.add(event.callId);
    } else if (event.type === 'retrying') {
      retries.inc({ tool: toolOf(event) });
    } else if (event.type === 'started') {
      awaitingApproval.delete(event.callId);
    }
    const end = endOf(event);
    if (end) {
      awaitingApproval.delete(event.callId);
      const labels = { status: end, tool: toolOf(event) };
      ended.inc(labels);
      const started = live.get(event.callId);
      if (started) duration.observe(labels, (event.at - started.queuedAt) / 1_000);
      live.delete(event.callId);
      return;
    }
    const current = live.get(event.callId);
    // A call's first start: an attempt run again (`retrying`, a recovery) is no wait for a worker.
    if (event.type === 'started' && current?.state === 'queued' && event.attempt === 1) {
      startWait.observe({ tool: toolOf(event) }, Math.max(0, event.at - current.queuedAt) / 1_000);
    }
    const state = nextState(current?.state, event);
    if (state === undefined) return;
    if (current) current.state = state;
    else live.set(event.callId, { state, queuedAt: event.at });
  });
  return registry;
}
