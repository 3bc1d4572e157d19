import type { DeliveryFilter } from '@baton/store';

/** `WHERE a AND b` over the conditions that are set, with their parameters in order. */
export function whereOf(
  conditions: ReadonlyArray<readonly [sql: string, ...params: unknown[]] | undefined>,
): {
  where: string;
  params: unknown[];
} {
  const set = conditions.filter((condition) => condition !== undefined);
  return {
    where: set.length > 0 ? `WHERE ${set.map(([sql]) => sql).join(' AND ')}` : '',
    params: set.flatMap(([, ...params]) => params),
  };
}

/** SQLite's substr counts characters (code points), so the prefix's length is counted the same way. */
export function sessionPrefixOf(filter: {
  sessionPrefix?: string;
}): readonly [string, number, string] | undefined {
  const prefix = filter.sessionPrefix;
  return prefix === undefined ? undefined : ['substr(session_id, 1, ?) = ?', [...prefix].length, prefix];
}

export function deliveryConditions(filter: DeliveryFilter) {
  return whereOf([
    filter.status === undefined ? undefined : ['status = ?', filter.status],
    filter.sessionId === undefined ? undefined : ['session_id = ?', filter.sessionId],
    sessionPrefixOf(filter),
    filter.callId === undefined ? undefined : ['call_id = ?', filter.callId],
  ]);
}
