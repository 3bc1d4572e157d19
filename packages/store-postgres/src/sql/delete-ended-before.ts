import type pg from 'pg';

/**
 * Removes the calls that ended before `time` (at most `limit`), with their rows, in the caller's
 * transaction; with the last batch, the acknowledged notifications and settled deliveries whose
 * call is gone. Resolves with how many calls it removed.
 */
export async function deleteEndedBefore(
  client: pg.ClientBase,
  time: number,
  limit?: number,
): Promise<number> {
  // The calls are locked first, so each statement after removes the rows of the same calls.
  const { rows } = await client.query<{ call_id: string }>(
    // A call that ended before the time was created before it (calls_by_creation).
    'SELECT call_id FROM calls WHERE created_at < $1 AND ended_at < $1 ORDER BY created_at LIMIT $2 FOR UPDATE',
    [time, limit ?? null],
  );
  const ids = rows.map((row) => row.call_id);
  if (ids.length === 0) return 0;
  for (const table of ['event_rows', 'artifacts', 'steps', 'event_resolutions', 'requests']) {
    await client.query(`DELETE FROM ${table} WHERE call_id = ANY($1)`, [ids]);
  }
  await client.query("DELETE FROM notifications WHERE status = 'acknowledged' AND call_id = ANY($1)", [ids]);
  await client.query("DELETE FROM webhook_deliveries WHERE status <> 'pending' AND call_id = ANY($1)", [ids]);
  // An ended call is in neither call_queue nor call_owners: the trigger that would look is not needed.
  await client.query("SELECT set_config('baton.keeps_calls', 'on', true)");
  await client.query('DELETE FROM calls WHERE call_id = ANY($1)', [ids]);
  // The last batch also takes the notifications acknowledged, and the deliveries settled,
  // after their call was removed.
  if (limit === undefined || ids.length < limit) {
    await client.query(
      "DELETE FROM notifications n WHERE status = 'acknowledged' AND NOT EXISTS (SELECT 1 FROM calls c WHERE c.call_id = n.call_id)",
    );
    await client.query(
      "DELETE FROM webhook_deliveries d WHERE status <> 'pending' AND NOT EXISTS (SELECT 1 FROM calls c WHERE c.call_id = d.call_id)",
    );
    // And the requests whose call was removed by other hands (a person, a script).
    await client.query(
      'DELETE FROM requests r WHERE NOT EXISTS (SELECT 1 FROM calls c WHERE c.call_id = r.call_id)',
    );
  }
  return ids.length;
}
