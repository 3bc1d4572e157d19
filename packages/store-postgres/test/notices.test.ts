import type { CallEvent, CallRecord } from '@baton/contracts';
import type { CallControl, NoticeTopic, Store, StoreNotice } from '@baton/store';
import { makeCallRecord } from '@baton/store/testing';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postgresStore } from '../src/index.js';
import { NOTICE_MAX_BYTES } from '../src/notices.js';
import { type ThrowawayPostgres, throwawayPostgres } from '../src/testing.js';

let server: ThrowawayPostgres;
beforeAll(async () => {
  server = await throwawayPostgres();
}, 60_000);
afterAll(() => server.stop());

/** PostgreSQL refuses a NOTIFY payload of 8,000 bytes or more. */
const NOTIFY_LIMIT_BYTES = 8_000;

function queuedEvent(callId: string, sessionId: string): CallEvent {
  return { type: 'queued', mode: 'inline', to: 'queued', callId, sessionId, toolName: 't', seq: 1, at: 1 };
}

/** The `events` notices a topic of the store tells, from when its LISTEN is up (it says `listening`). */
async function listening(
  store: Store,
  topic: NoticeTopic = { type: 'events' },
): Promise<Array<Extract<StoreNotice, { type: 'events' }>>> {
  const heard: Array<Extract<StoreNotice, { type: 'events' }>> = [];
  await new Promise<void>((resolve) => {
    store.listen?.((notice) => {
      if (notice.type === 'listening') resolve();
      else if (notice.type === 'events') heard.push(notice);
    }, topic);
  });
  return heard;
}

/** The notices a topic tells, one at a time as they come. */
function noticesOf(store: Store, topic: NoticeTopic): () => Promise<StoreNotice> {
  const heard: StoreNotice[] = [];
  const waiting: Array<(notice: StoreNotice) => void> = [];
  store.listen?.((notice) => {
    const take = waiting.shift();
    if (take) take(notice);
    else heard.push(notice);
  }, topic);
  return () => {
    const notice = heard.shift();
    return notice ? Promise.resolve(notice) : new Promise((resolve) => waiting.push(resolve));
  };
}

/** Waits until the notices heard name `count` calls. */
async function heardCalls(heard: Array<{ callIds: string[] }>, count: number): Promise<void> {
  for (let turn = 0; turn < 500 && heard.flatMap((notice) => notice.callIds).length < count; turn++) {
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** A store that writes and one that listens, on a schema of their own. */
async function writerAndListener(name: string) {
  const schema = `${name}_${process.pid}`;
  const writer = postgresStore({ connectionString: server.url, schema });
  const listener = postgresStore({ connectionString: server.url, schema });
  return { writer, listener, heard: await listening(listener) };
}

/** Writes these calls, queued, in one batch. */
function writeQueued(store: Store, calls: Array<{ callId: string; sessionId: string }>, writer?: string) {
  return store.write({
    calls: calls.map(({ callId, sessionId }) => makeCallRecord({ callId, sessionId })),
    events: calls.map(({ callId, sessionId }) => queuedEvent(callId, sessionId)),
    ...(writer === undefined ? {} : { writer }),
  });
}

describe('the notices of a PostgreSQL write', () => {
  it('tell of every call of a batch, whatever the length of its ids, each under 8,000 bytes', async () => {
    const { writer, listener, heard } = await writerAndListener('long_ids');
    // Ids of the longest kind a runtime accepts (128 characters), some of them in three-byte
    // characters, some of characters JSON escapes (two bytes or six each): 60 such calls used to
    // make one notice of about 25,000 bytes, and PostgreSQL refused the whole write.
    const sessionIdOf = (i: number) =>
      [
        `${'s'.repeat(120)}-${String(i).padStart(7, '0')}`,
        `${'会'.repeat(120)}${i}`,
        `${'"\\'.repeat(60)}${i}`,
        `${'\u0001'.repeat(120)}${i}`,
      ][i % 4] as string;
    const calls = Array.from({ length: 200 }, (_, i) => ({
      callId: `${'c'.repeat(120)}-${String(i).padStart(7, '0')}`,
      sessionId: sessionIdOf(i),
    }));
    await writeQueued(writer, calls, 'instance-1');
    await heardCalls(heard, calls.length);
    expect(heard.flatMap((notice) => notice.callIds).sort()).toEqual(calls.map((call) => call.callId).sort());
    expect(new Set(heard.flatMap((notice) => notice.sessionIds)).size).toBe(calls.length);
    for (const notice of heard) {
      expect(Buffer.byteLength(JSON.stringify(notice))).toBeLessThan(NOTIFY_LIMIT_BYTES);
      expect(notice.writer).toBe('instance-1');
    }
    expect(await writer.getCalls(calls.map((call) => call.callId))).toHaveLength(calls.length);
    await Promise.all([writer.close(), listener.close()]);
  });

  it('store a call whose ids no notice could hold, and tell of the others', async () => {
    const { writer, listener, heard } = await writerAndListener('huge_ids');
    // A host may raise the runtime's limit on ids (maxIdChars): 5,000 characters each is more
    // than a notice holds.
    const huge = { callId: 'c'.repeat(5_000), sessionId: 's'.repeat(5_000) };
    const small = { callId: 'small', sessionId: 's' };
    await writeQueued(writer, [huge, small]);
    await heardCalls(heard, 1);
    expect(heard.flatMap((notice) => notice.callIds)).toEqual(['small']);
    expect(await writer.getCall(huge.callId)).toMatchObject({ sessionId: huge.sessionId });
    await Promise.all([writer.close(), listener.close()]);
  });

  it('carry a request whose reason is longer than a notice holds, with the reason cut to fit', async () => {
    const { writer: sender, listener } = await writerAndListener('long_reason');
    const requests: CallControl[] = [];
    await new Promise<void>((resolve) => {
      listener.listen?.(
        (notice) => {
          if (notice.type === 'listening') resolve();
          if (notice.type === 'control' && notice.callId === 'c1') requests.push(notice);
        },
        { type: 'work' },
      );
    });
    // 20,000 characters of four bytes and two UTF-16 units each: a cut between the two halves of
    // one would leave a string PostgreSQL cannot encode.
    const reason = '😀'.repeat(20_000);
    await sender.send?.({ type: 'control', callId: 'c1', action: 'cancel', reason });
    for (let turn = 0; turn < 500 && requests.length === 0; turn++) {
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    const [request] = requests;
    expect(request).toMatchObject({ type: 'control', callId: 'c1', action: 'cancel' });
    expect(reason.startsWith(request?.reason ?? 'missing')).toBe(true);
    expect(request?.reason?.length).toBeGreaterThan(3_000);
    expect(request?.reason?.isWellFormed()).toBe(true);
    expect(Buffer.byteLength(JSON.stringify(request))).toBeLessThan(NOTIFY_LIMIT_BYTES);
    await Promise.all([sender.close(), listener.close()]);
  });

  it('fill each notice: a batch of 300 calls of short ids is told of in two', async () => {
    const { writer, listener, heard } = await writerAndListener('short_ids');
    const calls = Array.from({ length: 300 }, (_, i) => ({
      callId: `01a21a3a-5816-74ce-845a-${String(i).padStart(12, '0')}`,
      sessionId: `s${i % 16}`,
    }));
    await writeQueued(writer, calls);
    await heardCalls(heard, calls.length);
    expect(heard.map((notice) => notice.callIds.length)).toEqual([expect.any(Number), expect.any(Number)]);
    expect(heard.flatMap((notice) => notice.callIds)).toEqual(calls.map((call) => call.callId));
    await Promise.all([writer.close(), listener.close()]);
  });

  it('tell each topic to its own listeners: a client hears the calls it waits for, and no others', async () => {
    const schema = `topics_${process.pid}`;
    const writer = postgresStore({ connectionString: server.url, schema });
    const [follower, clientOne, clientTwo] = [1, 2, 3].map(() =>
      postgresStore({ connectionString: server.url, schema }),
    );
    const followed = await listening(follower as Store);
    const toOne = await listening(clientOne as Store, { type: 'replies', to: 'client-1' });
    // An instance id may hold any character: its channel is made of a hash of it.
    const two = `client 2 on ${'h'.repeat(100)}.example:会`;
    const toTwo = await listening(clientTwo as Store, { type: 'replies', to: two });
    const record = (callId: string, replyTo: string, status: 'queued' | 'inline' | 'succeeded') =>
      makeCallRecord({ callId, sessionId: 's', status, replyTo });
    const event = (callId: string, seq: number): CallEvent => ({ ...queuedEvent(callId, 's'), seq });
    // The clients submit: their own writes are told to the followers, not back to them.
    await writer.write({
      calls: [record('a', 'client-1', 'queued')],
      events: [event('a', 1)],
      writer: 'client-1',
    });
    await writer.write({ calls: [record('b', two, 'queued')], events: [event('b', 1)], writer: two });
    // A worker starts one (no reply yet), then ends both calls in one write.
    await writer.write({
      calls: [record('a', 'client-1', 'inline')],
      events: [event('a', 2)],
      writer: 'worker-1',
    });
    await writer.write({
      calls: [record('a', 'client-1', 'succeeded'), record('b', two, 'succeeded')],
      events: [event('a', 3), event('b', 2)],
      writer: 'worker-1',
    });
    await heardCalls(followed, 5);
    await heardCalls(toOne, 1);
    await heardCalls(toTwo, 1);
    expect(followed.map((notice) => [notice.writer, notice.callIds])).toEqual([
      ['client-1', ['a']],
      [two, ['b']],
      ['worker-1', ['a']],
      ['worker-1', ['a', 'b']],
    ]);
    // Notices come in the order of the commits: any of the clients' own would have come first. A
    // client hears the record as it was stored, and need not read it; the notice names the call
    // too, as it does when the record is too long to be told (see below).
    const told = (callId: string, replyTo: string) => ({
      type: 'events',
      callIds: [callId],
      sessionIds: ['s'],
      writer: 'worker-1',
      records: [record(callId, replyTo, 'succeeded')],
    });
    expect(toOne).toEqual([told('a', 'client-1')]);
    expect(toTwo).toEqual([told('b', two)]);
    await Promise.all([writer, follower, clientOne, clientTwo].map((store) => store?.close()));
  });

  it('name to a client, rather than hold, a record too long for a notice, and one the write refused', async () => {
    const schema = `long_replies_${process.pid}`;
    const writer = postgresStore({ connectionString: server.url, schema });
    const client = postgresStore({ connectionString: server.url, schema });
    const heard = await listening(client, { type: 'replies', to: 'client-1' });
    const record = (callId: string, overrides: Partial<CallRecord> = {}) =>
      makeCallRecord({ callId, sessionId: 's', replyTo: 'client-1', ...overrides });
    await writer.write({
      calls: ['short', 'long', 'taken'].map((callId) => record(callId)),
      writer: 'client-1',
    });
    // Another worker holds `taken`: what worker-1 writes of it is refused.
    await writer.claimQueued('worker-2', 1, 'taken');
    const ended = { status: 'succeeded' as const, endedAt: 2_000, ownerId: 'worker-1' };
    await writer.write({
      calls: [record('short', ended), record('long', { ...ended, output: 'x'.repeat(NOTICE_MAX_BYTES) })],
      writer: 'worker-1',
    });
    await heardCalls(heard, 2);
    expect(heard).toEqual([
      {
        type: 'events',
        callIds: ['short', 'long'],
        sessionIds: ['s'],
        writer: 'worker-1',
        records: [record('short', ended)],
      },
    ]);
    heard.length = 0;
    await writer.write({ calls: [record('taken', ended)], writer: 'worker-1' });
    await heardCalls(heard, 1);
    expect(heard).toEqual([{ type: 'events', callIds: ['taken'], sessionIds: ['s'], writer: 'worker-1' }]);
    expect((await writer.getCall('taken'))?.status).toBe('queued');
    await Promise.all([writer.close(), client.close()]);
  });

  it('say `listening` again when a lost LISTEN connection is made anew, and go on telling', async () => {
    const { writer, listener } = await writerAndListener('relisten');
    const next = noticesOf(listener, { type: 'work' });
    expect(await next()).toEqual({ type: 'listening' });
    const admin = new pg.Client({ connectionString: server.url });
    await admin.connect();
    // The listener's connection is the one whose last statement listened on this schema's channels.
    const { rowCount } = await admin.query(
      "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE query LIKE 'LISTEN baton_relisten%'",
    );
    await admin.end();
    expect(rowCount).toBe(1);
    // A notice sent while nothing listened is lost: `listening` is the listener's cue to read again.
    expect(await next()).toEqual({ type: 'listening' });
    await writeQueued(writer, [{ callId: 'after', sessionId: 's' }]);
    expect(await next()).toEqual({ type: 'queued' });
    await Promise.all([writer.close(), listener.close()]);
  });
});
