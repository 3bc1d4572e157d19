import type { CallEvent, CallRecord, EventResolution, Schedule, StepResult } from '@baton/contracts';
import {
  type CallFilter,
  type CallPage,
  cursorPosition,
  DEFAULT_PAGE_SIZE,
  ROW_EVENTS_MAX,
  type SessionEvent,
} from '@baton/store';
import { type CallRow, recordOf } from './call-rows.js';
import type { Query } from './notification-rows.js';
import { sessionConditions, whereOf } from './where.js';

export async function getCall(query: Query, callId: string): Promise<CallRecord | undefined> {
  const [row] = await query<Pick<CallRow, 'record' | 'owner_id'>>(
    'SELECT record, owner_id FROM calls WHERE call_id = $1',
    [callId],
    'baton_get_call',
  );
  return row && recordOf(row);
}

export async function getCalls(query: Query, callIds: readonly string[]): Promise<CallRecord[]> {
  if (callIds.length === 0) return [];
  // A client reads every reply with this: only the columns a record is made of.
  const rows = await query<Pick<CallRow, 'record' | 'owner_id'>>(
    'SELECT record, owner_id FROM calls WHERE call_id = ANY($1::text[])',
    [[...new Set(callIds)]],
    'baton_get_calls',
  );
  return rows.map(recordOf);
}

export async function listCalls(query: Query, filter: CallFilter = {}): Promise<CallPage> {
  const limit = filter.limit ?? DEFAULT_PAGE_SIZE;
  const statuses = typeof filter.status === 'string' ? [filter.status] : filter.status;
  const { where, params, next } = whereOf([
    filter.cursor === undefined ? undefined : ['position < ?', cursorPosition(filter.cursor)],
    ...sessionConditions(filter),
    filter.toolName === undefined ? undefined : ['tool_name = ?', filter.toolName],
    statuses === undefined ? undefined : ['status = ANY(?)', statuses],
  ]);
  const rows = await query<CallRow>(
    `SELECT position, record, owner_id FROM calls ${where} ORDER BY position DESC LIMIT $${next}`,
    [...params, limit + 1],
  );
  const page = rows.slice(0, limit);
  const last = page.at(-1);
  return {
    calls: page.map(recordOf),
    ...(rows.length > limit && last ? { nextCursor: String(last.position) } : {}),
  };
}

export async function listEvents(
  query: Query,
  callId: string,
  fromSeq = 0,
  limit?: number,
): Promise<CallEvent[]> {
  // LIMIT NULL is PostgreSQL's "no limit".
  const rows = await query<{ event: CallEvent }>(
    `SELECT e.event
     FROM (SELECT seq, events FROM event_rows WHERE call_id = $1 AND last_seq >= $2
           ORDER BY seq LIMIT $3) AS r,
          json_array_elements(r.events) WITH ORDINALITY AS e(event, n)
     WHERE r.seq + e.n - 1 >= $2
     ORDER BY r.seq, e.n LIMIT $3`,
    [callId, fromSeq, limit ?? null],
  );
  return rows.map((row) => row.event);
}

export async function listSessionEvents(
  query: Query,
  sessionId: string,
  afterPosition = 0,
  limit?: number,
): Promise<SessionEvent[]> {
  // The row that holds the position may hold events after it (a page may end inside a row):
  // rows take positions 256 apart, so it starts less than 256 before. Then as many rows as
  // events asked for, each holding one at least.
  return query<SessionEvent>(
    `SELECT r.position + e.n - 1 AS position, e.event
     FROM (SELECT position, events FROM event_rows
           WHERE session_id = $1 AND position > $2 - ${ROW_EVENTS_MAX} AND position + (last_seq - seq) > $2
           ORDER BY position LIMIT $3) AS r,
          json_array_elements(r.events) WITH ORDINALITY AS e(event, n)
     WHERE r.position + e.n - 1 > $2
     ORDER BY r.position, e.n LIMIT $3`,
    [sessionId, afterPosition, limit ?? null],
  );
}

export async function getArtifact(query: Query, callId: string, name: string): Promise<string | undefined> {
  const [row] = await query<{ content: string }>(
    'SELECT content FROM artifacts WHERE call_id = $1 AND name = $2',
    [callId, name],
  );
  return row?.content;
}

export async function listArtifacts(query: Query, callId: string): Promise<string[]> {
  const rows = await query<{ name: string }>('SELECT name FROM artifacts WHERE call_id = $1 ORDER BY name', [
    callId,
  ]);
  return rows.map((row) => row.name);
}

export async function listSteps(query: Query, callId: string): Promise<StepResult[]> {
  const rows = await query<{ step_id: string; value: unknown }>(
    'SELECT step_id, value FROM steps WHERE call_id = $1',
    [callId],
  );
  return rows.map((row) => ({ callId, stepId: row.step_id, value: row.value }));
}

export async function getResolution(query: Query, key: string): Promise<EventResolution | undefined> {
  const [row] = await query<{
    key: string;
    call_id: string;
    outcome: EventResolution['outcome'];
    at: number;
  }>('SELECT key, call_id, outcome, at FROM event_resolutions WHERE key = $1', [key]);
  return row && { key: row.key, callId: row.call_id, outcome: row.outcome, at: row.at };
}

export async function listSchedules(
  query: Query,
  filter: { sessionId?: string; enabled?: boolean } = {},
): Promise<Schedule[]> {
  const { where, params } = whereOf([
    filter.sessionId === undefined ? undefined : ['session_id = ?', filter.sessionId],
    filter.enabled === undefined ? undefined : ['enabled = ?', filter.enabled],
  ]);
  const rows = await query<{ schedule: Schedule }>(
    `SELECT schedule FROM schedules ${where} ORDER BY position`,
    params,
  );
  return rows.map((row) => row.schedule);
}
