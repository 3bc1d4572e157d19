import type { RuntimeInstance } from '@baton/contracts';
import { type InstanceRow, instanceOfRow } from '@baton/store';
import type { Query } from './notification-rows.js';

export async function registerInstance(query: Query, instance: RuntimeInstance): Promise<void> {
  await query(
    `INSERT INTO instances (id, host, pid, boot, started_at, heartbeat_at, lease_ms, protocol)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
     ON CONFLICT (id) DO UPDATE SET heartbeat_at = excluded.heartbeat_at, lease_ms = excluded.lease_ms`,
    [
      instance.id,
      instance.host,
      instance.pid,
      instance.boot,
      instance.startedAt,
      instance.heartbeatAt,
      instance.leaseMs,
      instance.protocol,
    ],
  );
}

export async function heartbeat(query: Query, instanceId: string, at: number): Promise<boolean> {
  const rows = await query('UPDATE instances SET heartbeat_at = $1 WHERE id = $2 RETURNING id', [
    at,
    instanceId,
  ]);
  return rows.length === 1;
}

export async function listInstances(query: Query): Promise<RuntimeInstance[]> {
  return (await query<InstanceRow>('SELECT * FROM instances', [])).map(instanceOfRow);
}

export async function removeInstance(query: Query, instanceId: string): Promise<void> {
  await query('DELETE FROM instances WHERE id = $1', [instanceId]);
}
