import { readFileSync } from 'node:fs';
import pg from 'pg';

/**
 * What the callers of the combined-fault suite asked and heard, and the invariants checked from it
 * and from the store once the faults are over. Each entry is a caller: a careful one sends the
 * same call id again (to another API server) until it gets an answer.
 */
export interface CallerRecord {
  callId: string;
  tool: 'work' | 'charge' | 'refuse' | 'steered';
  n: number;
  /** This caller shares its call id with another caller, sent at the same moment to another server. */
  shared: boolean;
  /** How many requests it sent before one was answered 200 (1: the first was). */
  requests: number;
  /** The status of the answer it got, or undefined if no request was ever answered. */
  answered: string | undefined;
  /** The call's end, as its caller learned it (from the answer, else by reading the call). */
  end: { status: string; output?: unknown; error?: { code: string } } | undefined;
  /**
   * A steered call's messages, as its caller sent them (each with its key, sent again until
   * answered): the number each was stored under, or the refusal.
   */
  messages?: Array<{ text: string; key: string; requests: number; seq?: number; refused?: string }>;
}

export interface Violations {
  /** An accepted call that did not end, or whose history does not end once as its record says. */
  endedWrong: string[];
  /** A history that does not start with `queued` at 1, or has a hole. */
  holes: string[];
  /** A detached call without exactly one notification of its end, or a call not detached with one. */
  notifications: string[];
  /**
   * An update or reminder stored after its call's end (an event, or a notification after the
   * end's), or one left to be given once the call ended (the end replaces those not yet given).
   */
  talkAfterEnd: string[];
  /** A tool run begun after its call's end was stored. */
  ranAfterEnd: string[];
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
  /** A message a tool read twice (a retry stored again), or read after the call's `finish`. */
  messagesTwice: string[];
  /** A message answered 202 that its call, ended, never read (but in a worker SIGKILLed as it read). */
  messagesUnread: string[];
  /** A call's messages read out of the order of their numbers. */
  messagesOutOfOrder: string[];
  /** One message (one key) answered with two numbers, or a message never answered. */
  messagesAnswered: string[];
}

/** What a run that keeps every invariant finds: no violation of any kind. */
export function noViolations(): Violations {
  return {
    endedWrong: [],
    holes: [],
    notifications: [],
    talkAfterEnd: [],
    ranAfterEnd: [],
    untold: [],
    seenTwice: [],
    ranTwice: [],
    interruptedWithoutCause: [],
    callers: [],
    messagesTwice: [],
    messagesUnread: [],
    messagesOutOfOrder: [],
    messagesAnswered: [],
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
  if (end?.status === 'failed' && end.error?.code === 'interrupted')
    return tool === 'charge' || tool === 'refuse';
  if (tool === 'refuse') return end?.status === 'failed' && end.error?.code === 'tool_error';
  if (end?.status !== 'succeeded') return false;
  const output = end.output as { worked?: number; charged?: number; steered?: number };
  return (tool === 'work' ? output.worked : tool === 'steered' ? output.steered : output.charged) === n;
}

const TERMINAL = ['succeeded', 'failed', 'cancelled', 'timed_out'];
const TERMINAL_SQL = TERMINAL.map((status) => `'${status}'`).join(', ');

/** How many updates and reminders the calls told, as stored: the run's figures. */
export async function talkCounted(database: string): Promise<{ updates: number; reminders: number }> {
  const db = new pg.Client({ connectionString: database });
  await db.connect();
  try {
    const { rows } = await db.query<{ updates: number; reminders: number }>(
      `SELECT count(*) FILTER (WHERE event->>'type' = 'update')::int AS updates,
              count(*) FILTER (WHERE event->>'type' = 'still_running')::int AS reminders
         FROM baton.events`,
    );
    return rows[0] ?? { updates: 0, reminders: 0 };
  } finally {
    await db.end();
  }
}

/** Reads the store and the runs log, and lists every violation of the suite's invariants. */
export async function violations(
  database: string,
  runsLog: string,
  callers: readonly CallerRecord[],
  /** The workers SIGKILLed, by pid: the moment of each kill, in milliseconds since the epoch. */
  killed: ReadonlyMap<string, number>,
  /** Where the steered tool logs each message it reads, for a run with steered calls. */
  readsLog?: string,
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
      ended_at: string | null;
      end_seq: number | null;
      last_talk_seq: number | null;
    }>(
      `SELECT call_id, array_agg(seq ORDER BY seq) AS seqs, array_agg(event->>'type' ORDER BY seq) AS types,
              max((event->>'at')::bigint) FILTER (WHERE event->>'type' = 'started') AS started_at,
              min((event->>'at')::bigint) FILTER (WHERE event->>'type' IN (${TERMINAL_SQL})) AS ended_at,
              min(seq) FILTER (WHERE event->>'type' IN (${TERMINAL_SQL})) AS end_seq,
              max(seq) FILTER (WHERE event->>'type' IN ('update', 'still_running')) AS last_talk_seq
         FROM baton.events GROUP BY call_id`,
    );
    const { rows: notices } = await db.query<{
      call_id: string;
      ends: number;
      running_left: number;
      running_after_end: number;
    }>(
      `SELECT call_id,
              count(*) FILTER (WHERE notification->>'outcome' <> 'running')::int AS ends,
              count(*) FILTER (WHERE notification->>'outcome' = 'running' AND status <> 'acknowledged')::int
                AS running_left,
              count(*) FILTER (WHERE notification->>'outcome' = 'running' AND position > ends.at)::int
                AS running_after_end
         FROM baton.notifications
         LEFT JOIN LATERAL (
           SELECT min(position) AS at FROM baton.notifications AS e
            WHERE e.call_id = notifications.call_id AND e.notification->>'outcome' <> 'running'
         ) AS ends ON true
        GROUP BY call_id`,
    );
    const record = new Map(calls.map((call) => [call.call_id, call]));
    const history = new Map(histories.map((row) => [row.call_id, row]));
    const noticesOf = new Map(notices.map((row) => [row.call_id, row]));
    const runs = new Map<string, string[]>();
    const lastRunAt = new Map<string, number>();
    for (const line of readFileSync(runsLog, 'utf8').split('\n').filter(Boolean)) {
      const [, callId, pid, at] = line.split(' ');
      runs.set(callId as string, [...(runs.get(callId as string) ?? []), pid as string]);
      lastRunAt.set(callId as string, Math.max(lastRunAt.get(callId as string) ?? 0, Number(at ?? 0)));
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
      const notified = noticesOf.get(callId);
      if ((notified?.ends ?? 0) !== (call?.detached ? 1 : 0)) {
        found.notifications.push(`${callId}: detached ${call?.detached}, ${notified?.ends ?? 0}`);
      }
      const talkedAfter = (events?.last_talk_seq ?? 0) > (events?.end_seq ?? Number.POSITIVE_INFINITY);
      if (talkedAfter || (notified?.running_left ?? 0) > 0 || (notified?.running_after_end ?? 0) > 0) {
        found.talkAfterEnd.push(
          `${callId}: events [${events?.types.join()}], ${notified?.running_left} updates left, ${notified?.running_after_end} after the end`,
        );
      }
      const endedAt = Number(events?.ended_at ?? Number.POSITIVE_INFINITY);
      if ((lastRunAt.get(callId) ?? 0) > endedAt) {
        found.ranAfterEnd.push(`${callId}: ran at ${lastRunAt.get(callId)}, ended at ${endedAt}`);
      }
      const ran = runs.get(callId) ?? [];
      const tool = callers.find((caller) => caller.callId === callId)?.tool;
      const again = ran.slice(0, -1).filter((pid) => !killed.has(pid));
      const idempotent = tool === 'work' || tool === 'steered';
      if (ran.length > 1 && (!idempotent || again.length > 0)) {
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
    if (readsLog !== undefined) messageViolations(found, readsLog, callers, runs, killed);
    return found;
  } finally {
    await db.end();
  }
}

/**
 * The steered calls' messages: each stored once under one number whatever the retries, each read
 * once and in the order of the numbers, none after `finish`, and every one answered 202 read by
 * the end (but one a SIGKILL took between storing its read and the tool's log of it).
 */
function messageViolations(
  found: Violations,
  readsLog: string,
  callers: readonly CallerRecord[],
  runs: ReadonlyMap<string, string[]>,
  killed: ReadonlyMap<string, number>,
): void {
  const reads = new Map<string, string[]>();
  for (const line of readFileSync(readsLog, 'utf8').split('\n').filter(Boolean)) {
    const [callId, text] = line.split(' ');
    reads.set(callId as string, [...(reads.get(callId as string) ?? []), text as string]);
  }
  const steered = callers.filter((caller) => caller.tool === 'steered' && caller.answered);
  const seqOf = new Map<string, Map<string, number>>();
  for (const caller of steered) {
    const seqs = seqOf.get(caller.callId) ?? new Map<string, number>();
    seqOf.set(caller.callId, seqs);
    for (const message of caller.messages ?? []) {
      if (message.seq === undefined) {
        if (message.refused === undefined)
          found.messagesAnswered.push(`${caller.callId} ${message.text}: never answered`);
        continue;
      }
      const before = seqs.get(message.text);
      if (before !== undefined && before !== message.seq) {
        found.messagesAnswered.push(`${caller.callId} ${message.text}: numbers ${before} and ${message.seq}`);
      }
      seqs.set(message.text, message.seq);
    }
  }
  for (const [callId, seqs] of seqOf) {
    const read = reads.get(callId) ?? [];
    const once = new Set<string>();
    for (const [index, text] of read.entries()) {
      if (once.has(text) || read.indexOf('finish') < index)
        found.messagesTwice.push(`${callId}: read [${read.join()}]`);
      once.add(text);
    }
    const numbers = read.map((text) => seqs.get(text) ?? 0);
    if (numbers.some((seq, i) => i > 0 && seq <= (numbers[i - 1] ?? 0))) {
      found.messagesOutOfOrder.push(`${callId}: read [${read.join()}] numbered [${numbers.join()}]`);
    }
    const killedRun = (runs.get(callId) ?? []).some((pid) => killed.has(pid));
    for (const text of seqs.keys()) {
      if (!once.has(text) && !killedRun)
        found.messagesUnread.push(`${callId} ${text}: read [${read.join()}]`);
    }
  }
}
