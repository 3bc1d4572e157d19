import { createHash } from 'node:crypto';
import { isTerminalStatus } from '@baton/contracts';
import type { CallControl, NoticeTopic, StoreNotice, StoreWrite } from '@baton/store';

/**
 * PostgreSQL refuses a NOTIFY payload of 8,000 bytes or more, and with it the whole write: the ids
 * of a batch go in notices below it. A call whose ids alone would not fit (ids longer than a
 * runtime's default limit of 128 characters allows) is told of by no notice; it is stored all the
 * same, and its followers read it at their next poll.
 */
export const NOTICE_MAX_BYTES = 7_999;

/** PostgreSQL cuts identifiers, channel names among them, at 63 bytes. */
const CHANNEL_MAX_BYTES = 63;

/**
 * The NOTIFY channels of a schema, one per topic, so that a process is woken only by the notices of
 * the topics it listens to: stores of other schemas on the server hear nothing of these.
 */
export class Channels {
  /** `work`: queued calls and requests (the name every version of Baton used for all notices). */
  readonly work: string;
  readonly events: string;
  readonly #replies: string;

  constructor(schema: string) {
    this.work = channelName(`baton_${schema}`);
    this.events = channelName(`baton_${schema}_events`);
    this.#replies = `baton_${schema}_to_`;
  }

  /** The channel of a client's replies: its instance id may hold any character, so it is hashed. */
  replies(to: string): string {
    return channelName(`${this.#replies}${hashOf(to).slice(0, 16)}`);
  }

  of(topic: NoticeTopic): string {
    return topic.type === 'replies' ? this.replies(topic.to) : this[topic.type];
  }
}

/** A name as it is, or hashed when longer than a channel's name may be; only [a-z0-9_] either way. */
function channelName(name: string): string {
  return name.length <= CHANNEL_MAX_BYTES ? name : `baton_${hashOf(name).slice(0, 40)}`;
}

function hashOf(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

/**
 * The notices to send at a commit, as `baton_write_calls` takes them: the channel of each, and each
 * notice's JSON, in order. The notices are JSON already and go in as they are, on a line each:
 * nothing escapes them again (a text[] parameter had pg escape every quote of every one), and the
 * statement parses none of them.
 */
export interface Notices {
  channels: string[];
  payloads: string[];
}

/** A call a notice names. */
interface Named {
  callId: string;
  sessionId: string;
}

/**
 * What the processes hear of a write, each on its topic's channel: the calls whose events it
 * stored, and by whom (`events`); those of them that ended or were detached, told to the client
 * that waits for them with their records (`replies`: a client is not woken by the calls of others,
 * nor reads back what it is told); and new unclaimed calls (`work`). The calls go in as few notices
 * as hold them: each fills up to PostgreSQL's limit on a payload, counted in bytes (ids may be
 * long, and not ASCII). `recordJson` is the JSON of each call's record as the batch stores it.
 */
export function noticesOf(
  batch: StoreWrite,
  sessionOf: ReadonlyMap<string, string>,
  channels: Channels,
  recordJson: ReadonlyMap<string, string>,
): Notices {
  const { writer } = batch;
  const notices: Notices = { channels: [], payloads: [] };
  const add = (channel: string, payloads: readonly string[]) => {
    for (const payload of payloads) {
      notices.channels.push(channel);
      notices.payloads.push(payload);
    }
  };
  const named = [...sessionOf].map(([callId, sessionId]) => ({ callId, sessionId }));
  add(channels.events, eventsNotices(named, writer));
  // By client, each call once (a batch may hold several records of one call).
  const waiting = new Map<string, Map<string, Named>>();
  for (const record of batch.calls ?? []) {
    const { replyTo, callId, sessionId } = record;
    // The reply is the call's end, or that it was detached (`backgrounded`): not its start.
    if (replyTo === undefined || replyTo === writer) continue;
    if (!record.detached && !isTerminalStatus(record.status)) continue;
    const calls = waiting.get(replyTo) ?? new Map<string, Named>();
    waiting.set(replyTo, calls.set(callId, { callId, sessionId }));
  }
  for (const [replyTo, calls] of waiting) {
    add(channels.replies(replyTo), eventsNotices([...calls.values()], writer, recordJson));
  }
  if ((batch.calls ?? []).some((record) => record.status === 'queued' && record.ownerId === undefined)) {
    add(channels.work, [JSON.stringify({ type: 'queued' } satisfies StoreNotice)]);
  }
  return notices;
}

/** Where the records go in a notice, at its end: `,"records":[` and then `]`. */
const RECORDS_OPEN = ',"records":[';

/**
 * `events` notices naming these calls (each with its session), packed up to the payload limit;
 * with `recordJson`, each holds the records of its calls too, but for a record too long for a
 * notice of its own (that call is named, and read).
 */
function eventsNotices(
  calls: readonly Named[],
  writer: string | undefined,
  recordJson?: ReadonlyMap<string, string>,
): string[] {
  const payloads: string[] = [];
  const empty: StoreNotice = { type: 'events', callIds: [], sessionIds: [], writer };
  const emptyBytes = jsonBytes(empty) + (recordJson ? RECORDS_OPEN.length + 1 : 0);
  let callIds: string[] = [];
  let sessionIds = new Set<string>();
  let records: string[] = [];
  let bytes = emptyBytes;
  const flush = () => {
    if (callIds.length === 0) return;
    const json = JSON.stringify({ ...empty, callIds, sessionIds: [...sessionIds] } satisfies StoreNotice);
    // The records are JSON already: they go in as they are, not parsed and written again.
    payloads.push(recordJson ? `${json.slice(0, -1)}${RECORDS_OPEN}${records.join(',')}]}` : json);
    callIds = [];
    sessionIds = new Set();
    records = [];
    bytes = emptyBytes;
  };
  for (const { callId, sessionId } of calls) {
    // Each id adds itself as a JSON string and a comma.
    const callBytes = jsonStringBytes(callId) + 1;
    const sessionBytes = jsonStringBytes(sessionId) + 1;
    if (emptyBytes + callBytes + sessionBytes > NOTICE_MAX_BYTES) continue; // see NOTICE_MAX_BYTES
    const record = recordJson?.get(callId);
    const recordBytes = record === undefined ? 0 : Buffer.byteLength(record) + 1;
    const held =
      record !== undefined && emptyBytes + callBytes + sessionBytes + recordBytes <= NOTICE_MAX_BYTES;
    let added = callBytes + (sessionIds.has(sessionId) ? 0 : sessionBytes) + (held ? recordBytes : 0);
    if (bytes + added > NOTICE_MAX_BYTES) {
      flush();
      added = callBytes + sessionBytes + (held ? recordBytes : 0);
    }
    callIds.push(callId);
    sessionIds.add(sessionId);
    if (held) records.push(record);
    bytes += added;
  }
  flush();
  return payloads;
}

/**
 * A request as a notice. Its reason is words for people, of any length: a reason too long for a
 * notice is cut to the longest start of it that fits, rather than the request refused.
 */
export function controlPayload(control: CallControl): string {
  const whole = JSON.stringify(control);
  const { reason } = control;
  if (reason === undefined || Buffer.byteLength(whole) <= NOTICE_MAX_BYTES) return whole;
  const cut = (chars: number) => {
    // A cut between the two halves of a character keeps neither.
    const end = chars > 0 && isHighSurrogate(reason.charCodeAt(chars - 1)) ? chars - 1 : chars;
    return JSON.stringify({ ...control, reason: reason.slice(0, end) });
  };
  let fits = 0;
  let fitsNot = reason.length;
  while (fitsNot - fits > 1) {
    const middle = Math.floor((fits + fitsNot) / 2);
    if (Buffer.byteLength(cut(middle)) <= NOTICE_MAX_BYTES) fits = middle;
    else fitsNot = middle;
  }
  return cut(fits);
}

function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}

function jsonBytes(value: unknown): number {
  return Buffer.byteLength(JSON.stringify(value));
}

/** Printable ASCII but `"` and backslash: what JSON writes as it is, a byte a character. */
const JSON_PLAIN = /^[\x20\x21\x23-\x5b\x5d-\x7e]*$/;

/**
 * The bytes of an id as a JSON string. Ids are nearly always plain ASCII (uuids, `s1`): their
 * length and two quotes, without making the JSON (two of these a call, on every commit).
 */
function jsonStringBytes(text: string): number {
  return JSON_PLAIN.test(text) ? text.length + 2 : jsonBytes(text);
}
