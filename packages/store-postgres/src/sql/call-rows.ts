import type { CallRecord } from '@baton/contracts';

/** What the statements that return calls read of a row of `calls`. */
export type CallRow = { position: number; record: CallRecord; owner_id: string | null };
export function recordOf(row: Pick<CallRow, 'record' | 'owner_id'>): CallRecord {
  const record = row.record;
  if (row.owner_id !== null) record.ownerId = row.owner_id;
  return record;
}
