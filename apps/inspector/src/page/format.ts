import type { CallRecord, Progress } from '@baton/contracts';

/** How long a call has run: until now while it runs, its duration once it ended. */
export function elapsedMs(record: CallRecord, now: number): number {
  if (record.durationMs !== undefined) return record.durationMs;
  return Math.max(0, now - (record.startedAt ?? record.createdAt));
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
