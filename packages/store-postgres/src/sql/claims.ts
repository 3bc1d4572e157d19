import type { CallRecord } from '@baton/contracts';
import type { CallControl, ClaimedCall } from '@baton/store';
import type pg from 'pg';
import { type CallRow, recordOf } from './call-rows.js';
import type { Query } from './notification-rows.js';

export async function claimQueued(
  query: Query,
  ownerId: string,
  limit: number,
  callId?: string,
): Promise<ClaimedCall[]> {
  // SKIP LOCKED: workers that claim at once each take different calls, without waiting (see
  // baton_claim in sql/).
  const rows = await query<
    Pick<CallRow, 'record' | 'owner_id'> & { last_seq: number; requests: CallControl[] | null }
  >(
    `SELECT claimed_record AS record, claimed_owner AS owner_id, claimed_last_seq AS last_seq,
       claimed_requests AS requests FROM baton_claim($1, $2, $3)`,
    [ownerId, limit, callId ?? null],
    'baton_claim',
  );
  return rows.map((row) => ({
    record: recordOf(row),
    lastSeq: row.last_seq,
    ...(row.requests === null ? {} : { requests: row.requests }),
  }));
}

export async function heldBy(query: Query, ownerId: string): Promise<ClaimedCall[]> {
  const rows = await query<
    Pick<CallRow, 'record' | 'owner_id'> & { last_seq: number; requests: CallControl[] | null }
  >(
    `SELECT c.record, c.owner_id,
       coalesce((SELECT r.last_seq FROM event_rows AS r WHERE r.call_id = c.call_id
                 ORDER BY r.seq DESC LIMIT 1), 0) AS last_seq,
       (SELECT json_agg(q.request ORDER BY q.position) FROM requests AS q
        WHERE q.call_id = c.call_id) AS requests
     FROM calls AS c
     WHERE c.position = ANY(ARRAY(SELECT o.position FROM call_owners AS o WHERE o.owner_id = $1))
       AND baton_holder(c.status, c.owner_id, c.ended_at) = $1
     ORDER BY c.position`,
    [ownerId],
  );
  return rows.map((row) => ({
    record: recordOf(row),
    lastSeq: row.last_seq,
    ...(row.requests === null ? {} : { requests: row.requests }),
  }));
}

/** Takes the calls of instances that are gone for `ownerId`, and forgets those instances, in the caller's transaction. */
export async function claimCalls(
  client: pg.ClientBase,
  goneInstanceIds: readonly string[],
  ownerId: string,
): Promise<CallRecord[]> {
  // A second claimer waits on the row locks, then sees the new owner and takes nothing.
  const { rows } = await client.query<Pick<CallRow, 'record' | 'owner_id'>>(
    `SELECT claimed_record AS record, claimed_owner AS owner_id FROM baton_claim_orphans($1, $2)
     ORDER BY claimed_position`,
    [ownerId, goneInstanceIds],
  );
  await client.query('DELETE FROM instances WHERE id = ANY($1)', [goneInstanceIds]);
  return rows.map(recordOf);
}
