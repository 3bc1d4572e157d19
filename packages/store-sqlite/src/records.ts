import type { CallRecord } from '@baton/contracts';

/** A row of `calls` as the queries that return records read it. */
export type CallRow = { position: number; record: string; owner_id: string | null };

export function recordOf(row: CallRow): CallRecord {
  const record = JSON.parse(row.record) as CallRecord;
  if (row.owner_id !== null) record.ownerId = row.owner_id;
  return record;
}

export const UNFINISHED = "status NOT IN ('succeeded', 'failed', 'cancelled', 'timed_out')";
