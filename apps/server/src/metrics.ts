import type { CallEvent } from '@baton/contracts';
import type { Runtime } from '@baton/runtime';
import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import { endOf } from './call-end.js';

type LiveState = 'queued' | 'inline' | 'backgrounded';

/** The `tool` label of calls to names no tool has (refused with `tool_not_found`). */
export const UNREGISTERED_TOOL = '(unregistered)';

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

/**
 * Prometheus metrics of a runtime, for `GET /metrics`: the live calls of this process by state,
 * the ended calls by status and tool, how long calls took, and the queue depth.
 */
export function runtimeMetrics(runtime: Runtime): Registry {
  const registry = new Registry();
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

  runtime.events$.subscribe((event) => {
    const end = endOf(event);
    if (end) {
      // Only registered names become labels: a caller who asks for 2,000 made-up tools makes one series.
      const tool = runtime.tools.has(event.toolName) ? event.toolName : UNREGISTERED_TOOL;
      const labels = { status: end, tool };
      ended.inc(labels);
      const started = live.get(event.callId);
      if (started) duration.observe(labels, (event.at - started.queuedAt) / 1_000);
      live.delete(event.callId);
      return;
    }
    const current = live.get(event.callId);
    const state = nextState(current?.state, event);
    if (state === undefined) return;
    if (current) current.state = state;
    else live.set(event.callId, { state, queuedAt: event.at });
  });
  return registry;
}
