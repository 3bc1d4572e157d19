import type { CallEvent, Progress, TerminalStatus } from '@baton/contracts';
import type { Runtime } from '@baton/runtime';
import { type RunningView, running, type ToolCallReport } from './reports.js';

/** A live view to stop. */
export interface Unsubscribable {
  unsubscribe(): void;
}

/** How much of a call's log a report shows: its tail, as an editor's tool card has room for. */
export const LOG_TAIL_CHARS = 1_000;

const progressText = ({ current, total, unit, label }: Progress): string =>
  [label, total === undefined ? `${current}` : `${current}/${total}`, unit].filter(Boolean).join(' ');

const ENDS: ReadonlySet<string> = new Set<TerminalStatus>(['succeeded', 'failed', 'cancelled', 'timed_out']);

const valueText = (value: unknown): string => (typeof value === 'string' ? value : JSON.stringify(value));

/** What an event adds to what the call has shown; undefined for one that shows nothing. */
function shown(view: RunningView, event: CallEvent): RunningView | undefined {
  switch (event.type) {
    case 'started':
      return view;
    case 'status':
      return { ...view, status: event.text };
    case 'progress':
      return { ...view, progress: progressText(event.progress) };
    case 'update':
      return { ...view, update: valueText(event.value) };
    case 'log':
      return { ...view, logTail: `${view.logTail ?? ''}${event.chunk}`.slice(-LOG_TAIL_CHARS) };
    default:
      return undefined;
  }
}

/**
 * Reports a running call to the client as it goes: each sign of it (started, status text,
 * progress, an update, its log) is a `tool_call_update` in progress with all it has shown. The
 * end is not reported here: the reply or the notification that brings it is, once.
 */
export function reportRunning(
  runtime: Pick<Runtime, 'follow'>,
  {
    callId,
    toolCallId,
    report,
    onError,
  }: {
    callId: string;
    toolCallId: string;
    report: (update: ToolCallReport) => void;
    /** A read of the store that failed: the live view stops, and the end still comes by its reply or notification. */
    onError: (error: unknown) => void;
  },
): Unsubscribable {
  let view: RunningView = {};
  let ended = false;
  const subscription = runtime.follow({ callId }).subscribe({
    next(event) {
      if (ended) return;
      if (ENDS.has(event.type)) {
        ended = true;
        return;
      }
      const next = shown(view, event);
      if (next === undefined) return;
      view = next;
      report(running(toolCallId, view));
    },
    error: onError,
  });
  return subscription;
}
