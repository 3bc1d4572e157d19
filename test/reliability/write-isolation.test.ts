import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { defineTool, ToolError } from '@baton/contracts';
import { createRuntime, type Runtime } from '@baton/runtime';
import { deferred, storedEvents } from '@baton/runtime/testing';
import { memoryStore, type Store } from '@baton/store';
import { postgresStore } from '@baton/store-postgres';
import { type ThrowawayPostgres, throwawayPostgres } from '@baton/store-postgres/testing';
import { sqliteStore } from '@baton/store-sqlite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';

/**
 * One bad call must never fail another's. Each store gets the same traffic: 400 honest calls at
 * once, beside calls whose arguments or results a store cannot keep as they are (PostgreSQL
 * refuses a NUL and a lone surrogate in JSON, and JSON nested past its stack). The honest calls
 * all succeed and are stored; the bad ones fail alone, with a code and a reason.
 */

const dir = mkdtempSync(join(tmpdir(), 'baton-isolation-'));
let postgres: ThrowawayPostgres;
beforeAll(async () => {
  postgres = await throwawayPostgres();
}, 60_000);
afterAll(async () => {
  await postgres?.stop();
  rmSync(dir, { recursive: true, force: true });
});

function nested(depth: number): unknown {
  let value: unknown = 'bottom';
  for (let i = 0; i < depth; i++) value = { down: value };
  return value;
}

const echo = defineTool({
  name: 'echo',
  description: 'says it back',
  input: z.object({ text: z.string() }),
  execute: ({ text }) => ({ text }),
});

/** Returns, logs and fails with text that PostgreSQL cannot keep as it is. */
const unstorable = defineTool({
  name: 'unstorable',
  description: 'produces NUL characters and lone surrogates',
  input: z.object({ fail: z.boolean() }),
  execute({ fail }, ctx) {
    ctx.progress({ current: 1, label: 'half\u0000way' });
    ctx.status('lone \uD800 surrogate');
    ctx.log('stdout', 'nul \u0000 here\n');
    if (fail) throw new ToolError('bad \u0000 news');
    return { 'k\u0000ey': 'a\u0000b', lone: '\uDC00x', pair: '😀', escaped: '\\u0000 stays' };
  },
});

/** Returns a value nested far deeper than a store can take (PostgreSQL's jsonb stops near 10,000). */
const deepResult = defineTool({
  name: 'deep_result',
  description: 'returns JSON nested 20,000 deep',
  input: z.object({}),
  execution: { mode: 'background' },
  execute: () => nested(20_000),
});

/** Writes in the background, so that only its end (the result) can be refused. */
const backgroundEcho = defineTool({
  name: 'background_echo',
  description: 'says it back, later',
  input: z.object({ text: z.string() }),
  execution: { mode: 'background' },
  async execute({ text }) {
    // Ends when the test says, after its backgrounded reply was stored.
    await backgroundGate.promise;
    return { text };
  },
});
/** Made anew for each store's test. */
let backgroundGate = deferred<void>();

const REFUSED = 'the store refuses this row';

/**
 * The store as it is, except that it refuses, as a real store refuses a row it cannot take, any
 * write that holds a record whose arguments or result say "poison": a fault that only one call
 * carries, of a kind the runtime cannot foresee.
 */
function refusingPoison(store: Store): Store {
  const poisoned = (value: unknown) => (value as { text?: unknown } | undefined)?.text === 'poison';
  return new Proxy(store, {
    get(target, property) {
      if (property === 'write') {
        return async (batch: Parameters<Store['write']>[0]) => {
          if (
            batch.calls?.some(
              (record) => poisoned(record.args) && (record.mode !== 'background' || poisoned(record.result)),
            )
          ) {
            throw new Error(REFUSED);
          }
          return target.write(batch);
        };
      }
      const value = Reflect.get(target, property, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}

const stores: Array<[string, () => Store]> = [
  ['memory', () => memoryStore()],
  ['SQLite', () => sqliteStore({ path: join(dir, `isolation-${Math.random()}.db`) })],
  [
    'PostgreSQL',
    () => postgresStore({ connectionString: postgres.url, schema: `isolation_${process.pid}_${Date.now()}` }),
  ],
];

describe.each(stores)('write isolation on the %s store', (_name, makeStore) => {
  let runtime: Runtime;
  let store: Store;
  beforeAll(async () => {
    store = makeStore();
    runtime = createRuntime({
      tools: [echo, backgroundEcho, unstorable, deepResult],
      store: refusingPoison(store),
    });
    await runtime.ready;
  });
  afterAll(() => runtime.close());

  it('400 honest calls all succeed beside bad arguments of every kind, which are refused before they run', async () => {
    const honest = Array.from({ length: 400 }, (_, i) =>
      runtime.call({ name: 'echo', args: { text: `call ${i}` }, sessionId: `tenant-${i % 2}` }),
    );
    const bad = [
      { text: 'a\u0000b' },
      { text: 'lone \uD800' },
      { 'k\u0000': 'x', text: 'x' },
      nested(10_000),
    ].map((args) => runtime.call({ name: 'echo', args: args as never, sessionId: 'attacker' }));
    const badIds = [
      runtime.call({ name: 'echo', args: { text: 'x' }, sessionId: 'attacker', callId: 'x'.repeat(129) }),
      runtime.call({ name: 'echo', args: { text: 'x' }, sessionId: 'a\u0000b' }),
      runtime.call({ name: 'e'.repeat(10_000), args: {}, sessionId: 'attacker' }),
      runtime.call({ name: 'echo', args: { text: 'x' }, sessionId: 'attacker', callId: '\uDC00' }),
    ];
    const replies = await Promise.all(honest);
    expect(replies.filter((reply) => reply.status !== 'succeeded')).toEqual([]);
    for (const reply of replies) expect((await store.getCall(reply.callId))?.status).toBe('succeeded');

    const badReplies = await Promise.all(bad);
    expect(
      badReplies.map((reply) => [reply.status, reply.error?.code, reply.error?.issues?.[0]?.path]),
    ).toEqual([
      ['failed', 'invalid_arguments', 'text'],
      ['failed', 'invalid_arguments', 'text'],
      ['failed', 'invalid_arguments', ''],
      ['failed', 'invalid_arguments', expect.stringMatching(/^down(\.down){63}$/)],
    ]);
    expect(badReplies[0]?.error?.message).toContain('NUL character');
    expect(badReplies[1]?.error?.message).toContain('lone surrogate');
    expect(badReplies[3]?.error?.message).toContain('nested more than 64 levels');
    // The refusals are kept, without the arguments no store could keep.
    const refused = await store.getCall(badReplies[0]?.callId as string);
    expect(refused).toMatchObject({ status: 'failed', attempt: 0 });
    expect(refused?.args).toBeUndefined();

    const idReplies = await Promise.all(badIds);
    expect(
      idReplies.map((reply) => [reply.error?.code, reply.error?.issues?.map((issue) => issue.path)]),
    ).toEqual([
      ['invalid_arguments', ['callId']],
      ['invalid_arguments', ['sessionId']],
      ['invalid_arguments', ['name']],
      ['invalid_arguments', ['callId']],
    ]);
    expect(idReplies[0]?.error?.message).toBe(
      'Invalid tool call: callId is 129 characters long, more than the limit of 128',
    );
  });

  it('a call whose rows the store refuses fails alone, named; 400 calls of two other tenants in the same batches are stored', async () => {
    const notified = new Promise<void>((resolve) => {
      const subscription = runtime.events$.subscribe((event) => {
        if (event.sessionId !== 'poisoner' || event.type !== 'notification') return;
        subscription.unsubscribe();
        resolve();
      });
    });
    backgroundGate = deferred<void>();
    const honest = Array.from({ length: 400 }, (_, i) =>
      runtime.call({ name: 'echo', args: { text: `call ${i}` }, sessionId: `tenant-${i % 2}/s` }),
    );
    const inline = runtime.call({ name: 'echo', args: { text: 'poison' }, sessionId: 'poisoner' });
    const background = await runtime.call({
      name: 'background_echo',
      args: { text: 'poison' },
      sessionId: 'poisoner',
    });
    const replies = await Promise.all(honest);
    expect(replies.filter((reply) => reply.status !== 'succeeded')).toEqual([]);
    for (const reply of replies) expect((await store.getCall(reply.callId))?.status).toBe('succeeded');
    expect(await inline).toMatchObject({
      status: 'failed',
      error: { code: 'persistence_failed', message: `The call could not be saved: ${REFUSED}` },
    });
    // The background call ran; the store refused its end, so it ends failed, and says so once.
    expect(background.status).toBe('backgrounded');
    backgroundGate.resolve();
    await notified;
    expect(await store.getCall(background.callId)).toMatchObject({
      status: 'failed',
      error: { code: 'persistence_failed', message: `The call could not be saved: ${REFUSED}` },
    });
    const notifications = await store.listNotifications({ sessionId: 'poisoner' });
    expect(notifications.map((notification) => [notification.callId, notification.outcome])).toEqual([
      [background.callId, 'failed'],
    ]);
  });

  it('keeps what a tool produces with NUL characters and lone surrogates, as U+FFFD, the same on every store', async () => {
    const [ok, failed] = await Promise.all([
      runtime.call({ name: 'unstorable', args: { fail: false }, sessionId: 'u' }),
      runtime.call({ name: 'unstorable', args: { fail: true }, sessionId: 'u' }),
    ]);
    expect(ok.status).toBe('succeeded');
    expect(ok.output).toEqual({
      'k\uFFFDey': 'a\uFFFDb',
      lone: '\uFFFDx',
      pair: '😀',
      escaped: '\\u0000 stays',
    });
    const record = await store.getCall(ok.callId);
    expect(record).toMatchObject({
      status: 'succeeded',
      result: ok.output,
      progress: { current: 1, label: 'half\uFFFDway' },
      statusText: 'lone \uFFFD surrogate',
      outputTail: expect.stringContaining('nul \uFFFD here'),
    });
    expect(failed).toMatchObject({
      status: 'failed',
      error: { code: 'tool_error', message: 'bad \uFFFD news' },
    });
    const events = await storedEvents(runtime, ok.callId);
    expect(events.map((event) => event.type)).toEqual([
      'queued',
      'started',
      'progress',
      'status',
      'log',
      'succeeded',
    ]);
  });

  it('a background call whose result cannot be stored ends failed, persistence_failed, with one notification; the calls beside it succeed', async () => {
    const notified = new Promise<void>((resolve) => {
      const subscription = runtime.events$.subscribe((event) => {
        if (event.sessionId !== 'deep' || event.type !== 'notification') return;
        subscription.unsubscribe();
        resolve();
      });
    });
    const deep = await runtime.call({ name: 'deep_result', args: {}, sessionId: 'deep' });
    expect(deep.status).toBe('backgrounded');
    const beside = await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        runtime.call({ name: 'echo', args: { text: `${i}` }, sessionId: 'deep' }),
      ),
    );
    expect(beside.every((reply) => reply.status === 'succeeded')).toBe(true);
    // Events are published once stored: the notification's event means the end has landed.
    await notified;
    const ended = await store.getCall(deep.callId);
    expect(ended?.status).toBe('failed');
    expect(ended?.error?.code).toBe('persistence_failed');
    expect(ended?.result).toBeUndefined();
    const notifications = await runtime.notifications.list({ sessionId: 'deep' });
    expect(notifications.map((notification) => [notification.callId, notification.outcome])).toEqual([
      [deep.callId, 'failed'],
    ]);
  });
});
