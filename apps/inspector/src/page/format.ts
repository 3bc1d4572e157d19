import type { CallRecord, CallStatus, Progress, TerminalStatus } from '@baton/contracts';

/** The states a call ends in (the contracts' own list lives beside Node code the page cannot bundle). */
const ENDS: ReadonlySet<CallStatus> = new Set([
  'succeeded',
  'failed',
  'cancelled',
  'timed_out',
] satisfies TerminalStatus[]);

export function hasEnded(record: CallRecord): boolean {
  return ENDS.has(record.status);
}

/**
 * How long a call has taken from its admission: until now while it goes on, until its end once it
 * ended. A wait for approval or in the queue counts; the tool's own run is `ranMs`.
 */
export function elapsedMs(record: CallRecord, now: number): number {
  return Math.max(0, (record.endedAt ?? now) - record.createdAt);
}

/** How long the tool itself ran, when it started and that differs from the whole. */
export function ranMs(record: CallRecord, now: number): number | undefined {
  if (record.startedAt === undefined) return undefined;
  return Math.max(0, (record.endedAt ?? now) - record.startedAt);
}

/** `1 call`, `2 calls`. */
export function counted(count: number, noun: string): string {
  return `${count.toLocaleString('en')} ${noun}${count === 1 ? '' : 's'}`;
}

/** What a call's badge says: its state, or that it waits for approval. */
export function stateLabel(record: CallRecord): string {
  if (record.approval === 'pending') return 'awaiting approval';
  return record.status.replace('_', ' ');
}

export function formatDuration(ms: number): string {
  if (ms < 1_000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1_000).toFixed(1)} s`;
  const minutes = Math.floor(ms / 60_000);
  return `${minutes} m ${String(Math.floor((ms % 60_000) / 1_000)).padStart(2, '0')} s`;
}

export function formatTime(at: number): string {
  return new Date(at).toISOString().slice(11, 23);
}

/** The time of day to the second (UTC), for a list. */
export function formatClock(at: number): string {
  return new Date(at).toISOString().slice(11, 19);
}

/** Completion from 0 to 1, when the tool said how much there is in all. */
export function fractionOf(progress: Progress | undefined): number | undefined {
  if (!progress?.total) return undefined;
  return Math.min(1, Math.max(0, progress.current / progress.total));
}

export function describeProgress(progress: Progress): string {
  const total = progress.total === undefined ? '' : ` / ${progress.total}`;
  return `${progress.current}${total}${progress.unit ? ` ${progress.unit}` : ''}${progress.label ? `: ${progress.label}` : ''}`;
}

export function show(value: unknown): string {
  return typeof value === 'string' ? value : JSON.stringify(value, null, 2);
}
