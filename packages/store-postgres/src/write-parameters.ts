import type { CallRecord } from '@baton/contracts';
import { type EventRow, eventRowsOf, type StoreWrite } from '@baton/store';
import { type Channels, noticesOf } from './notices.js';

/**
 * One statement, prepared once per connection: the whole batch in one round trip, in the
 * statement's own transaction, fenced (see `baton_write_calls` in `sql/`).
 */
export const WRITE = {
  name: 'baton_write_calls',
  text: `SELECT baton_write_calls($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::bigint[],
    $7::bigint[], $8::int[], $9::text,
    $10::text[], $11::text[], $12::int[], $13::int[], $14::text,
    $15::jsonb, $16::jsonb, $17::jsonb, $18::jsonb, $19::jsonb, $20::text, $21::text[], $22::text[],
    $23::text, $24::text[], $25::boolean, $26::boolean, $27::boolean)`,
};

/** The last of each key wins, as it would if the rows were written one after another. */
function lastByKey<T>(items: readonly T[] | undefined, key: (item: T) => string): T[] {
  const byKey = new Map<string, T>();
  for (const item of items ?? []) byKey.set(key(item), item);
  return [...byKey.values()];
}

/** A kind of row as the JSON array `baton_write_lines` takes, or null when the batch has none. */
const jsonRows = (rows: readonly unknown[]): string | null =>
  rows.length === 0 ? null : JSON.stringify(rows);

/** The JSON of each row on a line of its own (JSON.stringify never writes a newline). */
const jsonLines = (rows: readonly unknown[]): string => rows.map((row) => JSON.stringify(row)).join('\n');

/** A backslash before anything but a quote or a backslash: where JSON's escapes and an array literal's differ. */
const OTHER_ESCAPE = /\\[^"\\]/;

/**
 * A PostgreSQL array literal of these values, made by `JSON.stringify` in one pass: `["a",null,1]`
 * is `{"a",null,1}` in brackets, since an array literal escapes `"` and `\` inside quotes as JSON
 * does, and reads an unquoted `null` as NULL. `pg` makes the literal by adding to a string element
 * by element, leaving much garbage per call in a client. Where JSON escaped anything else (a control
 * character, which no id the runtime takes has), `pg` makes it, and the array goes as it is.
 */
function arrayLiteral(
  values: readonly (string | number | null)[],
): string | readonly (string | number | null)[] {
  const json = JSON.stringify(values);
  return OTHER_ESCAPE.test(json) ? values : `{${json.slice(1, -1)}}`;
}

/** The records' columns and JSON as `baton_write_calls` takes them, or nulls when there are none. */
function callParameters(records: readonly CallRecord[], json: readonly string[]): unknown[] {
  if (records.length === 0) return [null, null, null, null, null, null, null, null, null];
  return [
    arrayLiteral(records.map((record) => record.callId)),
    arrayLiteral(records.map((record) => record.sessionId)),
    arrayLiteral(records.map((record) => record.toolName)),
    arrayLiteral(records.map((record) => record.status)),
    arrayLiteral(records.map((record) => record.ownerId ?? null)),
    arrayLiteral(records.map((record) => record.endedAt ?? null)),
    arrayLiteral(records.map((record) => record.createdAt)),
    arrayLiteral(records.map((record) => record.attempt)),
    json.join('\n'),
  ];
}

/** The event rows' columns and events as `baton_write_lines` takes them, or nulls when there are none. */
function eventRowParameters(rows: readonly EventRow[]): unknown[] {
  if (rows.length === 0) return [null, null, null, null, null];
  return [
    arrayLiteral(rows.map((row) => row.callId)),
    arrayLiteral(rows.map((row) => row.sessionId)),
    arrayLiteral(rows.map((row) => row.seq)),
    arrayLiteral(rows.map((row) => row.lastSeq)),
    jsonLines(rows.map((row) => row.events)),
  ];
}

/**
 * Whether every call of a batch is new (one it makes, or a first record under an id made up), or
 * every one is stored already (none is either): the runtime says so of each.
 */
function callsAre(
  records: readonly CallRecord[],
  { newCalls, firstRecords }: StoreWrite,
): 'new' | 'stored' | 'both' | undefined {
  if (records.length === 0) return undefined;
  const count = (newCalls?.length ?? 0) + (firstRecords?.length ?? 0);
  if (count === 0) return 'stored';
  const fresh = new Set([...(newCalls ?? []), ...(firstRecords ?? [])]);
  const made = records.filter((record) => fresh.has(record.callId)).length;
  return made === records.length ? 'new' : made === 0 ? 'stored' : 'both';
}

/**
 * A batch as the parameters of `baton_write_calls` (see `sql/`), serialised at once: the caller
 * goes on changing the objects it wrote after `write()` returns. The last of each key wins. The
 * last three say that this is the write's first try, which inserts its rows without ON CONFLICT
 * and updates stored calls with a plain UPDATE (see `PostgresStore.write`), and whether its calls
 * are all new, or all stored already.
 */
export function parametersOf(batch: StoreWrite, channels: Channels): unknown[] {
  const eventRows = eventRowsOf(batch.events ?? []);
  // The session of each call with events in the batch, in the order of the calls' first events.
  const sessionOf = new Map(eventRows.map((row): [string, string] => [row.callId, row.sessionId]));
  const records = lastByKey(batch.calls, (record) => record.callId);
  // Each record's JSON, made once: stored, and told to the client that waits for it.
  const json = records.map((record) => JSON.stringify(record));
  const recordJson = new Map(
    records.map((record, i): [string, string] => [record.callId, json[i] as string]),
  );
  const notices = noticesOf(batch, sessionOf, channels, recordJson);
  const sessions = new Set(sessionOf.values());
  const calls = callsAre(records, batch);
  return [
    ...callParameters(records, json),
    ...eventRowParameters(eventRows),
    jsonRows(batch.notifications ?? []),
    jsonRows(lastByKey(batch.artifacts, (artifact) => `${artifact.callId}\u0000${artifact.name}`)),
    jsonRows(lastByKey(batch.steps, (step) => `${step.callId}\u0000${step.stepId}`)),
    jsonRows(lastByKey(batch.schedules, (schedule) => schedule.id)),
    jsonRows(batch.resolutions ?? []),
    batch.writer ?? null,
    sessions.size === 0 ? null : arrayLiteral([...sessions]),
    notices.channels.length === 0 ? null : arrayLiteral(notices.channels),
    notices.channels.length === 0 ? null : notices.payloads.join('\n'),
    batch.newCalls === undefined || batch.newCalls.length === 0 ? null : arrayLiteral(batch.newCalls),
    true,
    calls === 'new',
    calls === 'stored',
  ];
}

/** The parameters of a write's second try (see `PostgresStore.write`): those of its first, told so. */
export function secondTry(values: readonly unknown[]): unknown[] {
  return [...values.slice(0, -3), false, false, false];
}
