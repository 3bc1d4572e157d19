import type { DeliveryFilter } from '@baton/store';

/** `WHERE a AND b` over the conditions that are set, each written with `?` for its one parameter. */
export function whereOf(
  conditions: ReadonlyArray<readonly [sql: string, param: unknown] | undefined>,
  first = 1,
) {
  const set = conditions.filter((condition) => condition !== undefined);
  let n = first;
  const clauses = set.map(([sql]) => sql.replace('?', () => `$${n++}`));
  return {
    where: clauses.length > 0 ? `WHERE ${clauses.join(' AND ')}` : '',
    params: set.map(([, param]) => param),
    next: n,
  };
}

export function deliveryConditions(filter: DeliveryFilter) {
  return [
    filter.status === undefined ? undefined : (['status = ?', filter.status] as const),
    ...sessionConditions(filter),
    filter.callId === undefined ? undefined : (['call_id = ?', filter.callId] as const),
  ];
}

export function sessionConditions(filter: { sessionId?: string; sessionPrefix?: string }) {
  return [
    filter.sessionId === undefined ? undefined : (['session_id = ?', filter.sessionId] as const),
    filter.sessionPrefix === undefined
      ? undefined
      : (['starts_with(session_id, ?)', filter.sessionPrefix] as const),
  ];
}
