import { readFileSync } from 'node:fs';
import pg from 'pg';

/**
 * What the callers of the combined-fault suite asked and heard, and the invariants checked from it
 * and from the store once the faults are over. Each entry is a caller: a careful one sends the
 * same call id again (to another API server) until it gets an answer.
 */
export interface CallerRecord {
  callId: string;
  tool: 'work' | 'charge' | 'refuse';
  n: number;
  /** This caller shares its call id with another caller, sent at the same moment to another server. */
  shared: boolean;
  /** How many requests it sent before one was answered 200 (1: the first was). */
  requests: number;
  /** The status of the answer it got, or undefined if no request was ever answered. */
  answered: string | undefined;
  /** The call's end, as its caller learned it (from the answer, else by reading the call). */
  end: { status: string; output?: unknown; error?: { code: string } } | undefined;
}

export interface Violations {
  /** An accepted call that did not end, or whose history does not end once as its record says. */
  endedWrong: string[];
  /** A history that does not start with `queued` at 1, or has a hole. */
  holes: string[];
  /** A detached call without exactly one notification, or a call not detached with one. */
  notifications: string[];
  /** A caller told `backgrounded` of a call that was not detached: its end is told to nobody. */
  untold: string[];
  /** A caller of its own, answered at its first request with the end of a detached call: seen twice. */
  seenTwice: string[];
  /** A tool that is not idempotent run twice, or an idempotent one run again though no worker died. */
  ranTwice: string[];
  /**
   * A call ended `interrupted` that no killed worker held: it ran on none, and its start was not
   * stored before a kill (a worker killed between storing a start and running the tool leaves a
   * call that may have begun: it ends `interrupted`, never run).
   */
  interruptedWithoutCause: string[];
  /** A caller never answered, or answered with the wrong end. */
  callers: string[];
}

/** What a run that keeps every invariant finds: no violation of any kind. */
export function noViolations(): Violations {
  return {
    endedWrong: [],
    holes: [],
    notifications: [],
    untold: [],
    seenTwice: [],
    ranTwice: [],
    interruptedWithoutCause: [],
    callers: [],
  };
}

/** How many of each kind were found, for the run's one line of figures. */
export function counted(found: Violations): string {
  return Object.entries(found)
    .map(([name, list]) => `${name} ${list.length}`)
    .join(', ');
}

/** The end a call of the suite's tools should have. */
function rightEnd({ tool, n, end }: CallerRecord): boolean {
  if (end?.status === 'failed' && end.error?.code === 'interrupted') return tool !== 'work';
  if (tool === 'refuse') return end?.status === 'failed' && end.error?.code === 'tool_error';
  if (end?.status !== 'succeeded') return false;
  const output = end.output as { worked?: number; charged?: number };
  return (tool === 'work' ? output.worked : output.charged) === n;
}

const TERMINAL = ['succeeded', 'failed', 'cancelled', 'timed_out'];

/** Reads the store and the runs log, and lists every violation of the suite's invariants. */
export async function violations(
  database: string,
  runsLog: string,
  callers: readonly CallerRecord[],
  /** The workers SIGKILLed, by pid: the moment of each kill, in milliseconds since the epoch. */
  killed: ReadonlyMap<string, number>,
): Promise<Violations> {
  const db = new pg.Client({ connectionString: database });
  await db.connect();
  try {
    const { rows: calls } = await db.query<{
      call_id: string;
      status: string;
      detached: boolean;
      code: string | null;
    }>(
      `SELECT call_id, status, (record->>'detached')::boolean AS detached, record->'error'->>'code' AS code
         FROM baton.calls`,
    );
    const { rows: histories } = await db.query<{
      call_id: string;
      seqs: number[];
      types: string[];
      started_at: string | null;
    }>(
      `SELECT call_id, array_agg(seq ORDER BY seq) AS seqs, array_agg(event->>'type' ORDER BY seq) AS types,
              max((event->>'at')::bigint) FILTER (WHERE event->>'type' = 'started') AS started_at
         FROM baton.events GROUP BY call_id`,
    );
    const { rows: notices } = await db.query<{ call_id: string; count: number }>(
      'SELECT call_id, count(*)::int AS count FROM baton.notifications GROUP BY call_id',
    );
    const record = new Map(calls.map((call) => [call.call_id, call]));
    const history = new Map(histories.map((row) => [row.call_id, row]));
    const noticesOf = new Map(notices.map(({ call_id, count }) => [call_id, count]));
    const runs = new Map<string, string[]>();
    for (const line of readFileSync(runsLog, 'utf8').split('\n').filter(Boolean)) {
      const [, callId, pid] = line.split(' ');
      runs.set(callId as string, [...(runs.get(callId as string) ?? []), pid as string]);
    }

    const found = noViolations();
    const accepted = new Set(callers.filter((caller) => caller.answered).map((caller) => caller.callId));
    for (const callId of accepted) {
      const call = record.get(callId);
      const events = history.get(callId);
      const ends = events?.types.filter((type) => TERMINAL.includes(type)) ?? [];
      if (!call || ends.length !== 1 || ends[0] !== call.status) {
        found.endedWrong.push(`${callId}: ${call?.status ?? 'not stored'}, ends [${ends.join()}]`);
      }
      const seqs = events?.seqs ?? [];
      if (events?.types[0] !== 'queued' || seqs.some((seq, i) => seq !== i + 1)) {
        found.holes.push(`${callId}: [${events?.types.map((type, i) => `${seqs[i]} ${type}`).join(', ')}]`);
      }
      if ((noticesOf.get(callId) ?? 0) !== (call?.detached ? 1 : 0)) {
        found.notifications.push(`${callId}: detached ${call?.detached}, ${noticesOf.get(callId) ?? 0}`);
      }
      const ran = runs.get(callId) ?? [];
      const tool = callers.find((caller) => caller.callId === callId)?.tool;
      const again = ran.slice(0, -1).filter((pid) => !killed.has(pid));
      if (ran.length > 1 && (tool !== 'work' || again.length > 0)) {
        found.ranTwice.push(`${callId} (${tool}): ran on ${ran.join(', ')}`);
      }
      const startedAt = Number(events?.started_at ?? Number.POSITIVE_INFINITY);
      const startedBeforeAKill = ran.length === 0 && [...killed.values()].some((at) => startedAt <= at);
      if (call?.code === 'interrupted' && !ran.some((pid) => killed.has(pid)) && !startedBeforeAKill) {
        found.interruptedWithoutCause.push(
          `${callId}: ran on ${ran.join(', ') || 'no worker'}, started at ${events?.started_at ?? 'no time'}`,
        );
      }
    }
    for (const caller of callers) {
      const call = record.get(caller.callId);
      if (!caller.answered || !rightEnd(caller)) {
        found.callers.push(
          `${caller.callId}: answered ${caller.answered}, ended ${JSON.stringify(caller.end)}`,
        );
      }
      if (caller.answered === 'backgrounded' && !call?.detached) found.untold.push(caller.callId);
      if (
        caller.answered !== 'backgrounded' &&
        caller.answered !== undefined &&
        call?.detached &&
        caller.requests === 1 &&
        !caller.shared
      ) {
        found.seenTwice.push(`${caller.callId}: answered ${caller.answered}, and notified`);
      }
    }
    return found;
  } finally {
    await db.end();
  }
}
