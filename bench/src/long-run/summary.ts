import { type Phase, REFUSING_PHASES } from './phases.js';
import type { PlottedSample } from './plot.js';

/** What one phase came to: the figures RESULTS quotes, with how long the recovery after it took. */
export interface PhaseSummary {
  phase: string;
  fault: string;
  endedPerSecond: number;
  backgrounded: number;
  refused: number;
  failed: number;
  /** The most calls waiting for a worker, and the oldest one's longest wait, in seconds. */
  maxQueued: number | undefined;
  maxOldestWaitingSeconds: number | undefined;
  /** The largest of the phase's sampled p99s (each over one sample's calls). */
  worstP99Ms: number;
  /** The same of the wait from a call's making to its start in a worker (the claim's). */
  worstStartP99Ms: number;
  maxDeadTuples: number | undefined;
  megabytesAtEnd: number | undefined;
  /**
   * For a clean stretch after a fault: seconds from its start to the first sample that is back
   * (see isRecovered; undefined: not within the stretch).
   */
  recoverySeconds?: number | undefined;
}

/** The worst p99 of the clean phase's samples (at least 1 ms): what a recovery is held to. */
export function cleanP99Of(samples: readonly PlottedSample[]): number {
  return Math.max(1, ...samples.filter((sample) => sample.phase === 'clean').map((sample) => sample.p99Ms));
}

/**
 * Whether a sample is back: at least 90% of what is offered ended, at a p99 within twice the clean
 * one or 100 ms, whichever is more (a clean p99 of a few ms doubles on a busy machine's moment).
 */
export function isRecovered(sample: PlottedSample, cleanP99: number): boolean {
  return (
    sample.endedPerSecond >= 0.9 * sample.offeredPerSecond && sample.p99Ms <= Math.max(2 * cleanP99, 100)
  );
}

export function summaryOf(samples: readonly PlottedSample[], phases: readonly Phase[]): PhaseSummary[] {
  const of = (name: string) => samples.filter((sample) => sample.phase === name);
  const cleanP99 = cleanP99Of(samples);
  return phases.map((phase, i) => {
    const own = of(phase.name);
    const most = (value: (sample: PlottedSample) => number | undefined) => {
      const values = own.map(value).filter((n): n is number => n !== undefined);
      return values.length > 0 ? Math.max(...values) : undefined;
    };
    const count = (perSecond: (sample: PlottedSample) => number | undefined) =>
      Math.round(own.reduce((sum, sample, at) => sum + (perSecond(sample) ?? 0) * gapOf(own, at), 0));
    const summary: PhaseSummary = {
      phase: phase.name,
      fault: phase.fault,
      endedPerSecond: own.reduce((sum, sample) => sum + sample.endedPerSecond, 0) / Math.max(1, own.length),
      backgrounded: count((sample) => sample.backgroundedPerSecond),
      refused: count((sample) => sample.refusedPerSecond),
      failed: count((sample) => sample.failedPerSecond),
      maxQueued: most((sample) => sample.queued),
      maxOldestWaitingSeconds: most((sample) => sample.oldestWaitingSeconds),
      worstP99Ms: Math.max(0, ...own.map((sample) => sample.p99Ms)),
      worstStartP99Ms: Math.max(0, ...own.map((sample) => sample.startP99Ms ?? 0)),
      maxDeadTuples: most((sample) => sample.deadTuples),
      megabytesAtEnd: own.at(-1)?.megabytes,
    };
    if (phase.name.startsWith('recovery') && i > 0) {
      const start = samples[samples.indexOf(own[0] as PlottedSample) - 1]?.t ?? 0;
      const back = own.find((sample) => isRecovered(sample, cleanP99));
      summary.recoverySeconds = back ? back.t - start : undefined;
    }
    return summary;
  });
}

/** The seconds a sample covers: since the sample before it. */
function gapOf(samples: readonly PlottedSample[], at: number): number {
  const previous = samples[at - 1];
  const sample = samples[at] as PlottedSample;
  return previous ? sample.t - previous.t : 5;
}

/** The bounds a run must keep (`--check`, the short form in CI), each broken one said in a line. */
export function violations(run: {
  callers: { ended: number; backgrounded: number; refused: number; failed: number; unanswered: number };
  calls: Record<string, number>;
  phases: readonly PhaseSummary[];
}): string[] {
  const found: string[] = [];
  const stored = Object.values(run.calls).reduce((sum, n) => sum + n, 0);
  // add_one never fails: every call kept ends `succeeded`, and its caller heard of it, once: its
  // end, or that it went to the background (then its end is a notification). A call whose caller
  // heard it fail was not kept.
  if (stored !== (run.calls.succeeded ?? 0))
    found.push(`calls kept that did not succeed: ${JSON.stringify(run.calls)}`);
  const heard = run.callers.ended + run.callers.backgrounded;
  if (stored !== heard) {
    found.push(
      `${stored} calls kept, but their callers heard ${run.callers.ended} end and ${run.callers.backgrounded} go to the background (and ${run.callers.refused} refused, ${run.callers.failed} fail)`,
    );
  }
  if (run.callers.unanswered > 0) found.push(`${run.callers.unanswered} calls never answered`);
  if (run.callers.failed > 0) found.push(`${run.callers.failed} calls failed`);
  for (const phase of run.phases) {
    if (phase.failed > 0) found.push(`${phase.phase}: ${phase.failed} calls failed`);
    // Only a restart past the ride-out and an overload past what a client holds may refuse calls
    // (nothing kept), and the stretches that recover from them.
    if (phase.refused > 0 && !REFUSING_PHASES.has(phase.phase)) {
      found.push(`${phase.phase}: ${phase.refused} calls refused`);
    }
    if ('recoverySeconds' in phase && phase.recoverySeconds === undefined) {
      found.push(
        `${phase.phase}: the calls did not come back to the rate offered at a p99 within twice the clean one (or 100 ms)`,
      );
    }
  }
  return found;
}
