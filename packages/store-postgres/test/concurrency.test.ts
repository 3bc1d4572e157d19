import type { CallEvent } from '@baton/contracts';
import type { SessionEvent, Store } from '@baton/store';
import { makeCallRecord } from '@baton/store/testing';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postgresStore } from '../src/index.js';
import { type ThrowawayPostgres, throwawayPostgres } from '../src/testing.js';

let server: ThrowawayPostgres;
beforeAll(async () => {
  server = await throwawayPostgres();
}, 60_000);
afterAll(() => server.stop());

function progressEvent(callId: string, seq: number, sessionId: string): CallEvent {
  return { type: 'progress', callId, sessionId, toolName: 't', seq, at: seq, progress: { current: seq } };
}

describe('PostgreSQL under concurrency', () => {
  it('migrates once when many stores open the same schema at once', async () => {
    const stores = Array.from({ length: 6 }, () =>
      postgresStore({
        connectionString: server.url,
        schema: `opened_at_once_${process.pid}`,
        maxConnections: 2,
      }),
    );
    await Promise.all(stores.map((store) => store.listCalls()));
    const client = new pg.Client({ connectionString: server.url });
    await client.connect();
    const { rows } = await client.query(
      `SELECT version FROM opened_at_once_${process.pid}.baton_schema ORDER BY version`,
    );
    await client.end();
    expect(rows).toEqual([{ version: 1 }]);
    await Promise.all(stores.map((store) => store.close()));
  });

  it('lets a follower of a session read every event once while four writers commit to it at once', async () => {
    const schema = `one_session_${process.pid}`;
    const writers: Store[] = Array.from({ length: 4 }, () =>
      postgresStore({ connectionString: server.url, schema, maxConnections: 2 }),
    );
    const reader = postgresStore({ connectionString: server.url, schema });
    const calls = writers.map((_, w) => makeCallRecord({ callId: `w${w}`, sessionId: 's' }));
    await reader.write({ calls });

    const perWriter = 150;
    let writing = true;
    const writes = Promise.all(
      writers.map(async (store, w) => {
        for (let seq = 1; seq <= perWriter; seq++) {
          await store.write({ events: [progressEvent(`w${w}`, seq, 's')] });
        }
      }),
    ).finally(() => {
      writing = false;
    });
    const seen: SessionEvent[] = [];
    while (writing) {
      seen.push(...(await reader.listSessionEvents('s', seen.at(-1)?.position ?? 0)));
    }
    await writes;
    seen.push(...(await reader.listSessionEvents('s', seen.at(-1)?.position ?? 0)));

    const labels = seen.map(({ event }) => `${event.callId}:${event.seq}`);
    expect(new Set(labels).size).toBe(labels.length);
    expect(labels).toHaveLength(writers.length * perWriter);
    await Promise.all([...writers, reader].map((store) => store.close()));
  });
});
