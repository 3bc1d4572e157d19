/**
 * Deploys drain: a server told to stop (SIGTERM) takes no new calls, lets the live ones end for
 * its drain, and hands over the rest, which its next start (SQLite) or another process
 * (PostgreSQL) takes up. Nothing is cancelled. Real processes, real signals.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { type ThrowawayPostgres, throwawayPostgres } from '@baton/store-postgres/testing';
import { type ServerProcess, startServer } from '@baton/test-support';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

// Inside the repository, so that the tools module finds `@baton/contracts` as a project would.
const outputs = join(import.meta.dirname, '..', 'test-output');
mkdirSync(outputs, { recursive: true });
const dir = mkdtempSync(join(outputs, 'drain-'));
let postgres: ThrowawayPostgres;
beforeAll(async () => {
  postgres = await throwawayPostgres();
}, 60_000);
afterAll(async () => {
  await postgres.stop();
  rmSync(dir, { recursive: true, force: true });
});

/**
 * `nap` sleeps `ms` and may run again after a crash; `note` does so in the background; `charge`
 * sleeps `ms` and must not run again. Each run writes a line to `runs.log`: which tool, which call,
 * which process.
 */
writeFileSync(
  join(dir, 'tools.mjs'),
  `import { appendFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { defineTool } from '@baton/contracts';
const input = { type: 'object', properties: { ms: { type: 'integer' } }, required: ['ms'] };
const ran = (tool, ctx) => appendFileSync(new URL('./runs.log', import.meta.url), \`\${tool} \${ctx.callId} \${process.pid}\\n\`);
export const nap = defineTool({
  name: 'nap', description: 'Sleeps', input,
  execution: { mode: 'auto', idempotent: true },
  async execute({ ms }, ctx) { ran('nap', ctx); await sleep(ms, undefined, { signal: ctx.signal }); return 'rested ' + ms; },
});
export const note = defineTool({
  name: 'note', description: 'Writes a note in the background', input,
  execution: { mode: 'background', idempotent: true },
  async execute({ ms }, ctx) { ran('note', ctx); await sleep(ms, undefined, { signal: ctx.signal }); return 'noted'; },
});
export const charge = defineTool({
  name: 'charge', description: 'Charges a card, slowly', input,
  execution: { mode: 'auto', idempotent: false },
  async execute({ ms }, ctx) { ran('charge', ctx); await sleep(ms, undefined, { signal: ctx.signal }); return 'charged'; },
});
`,
);

const runsOf = (callId: string) =>
  readFileSync(join(dir, 'runs.log'), 'utf8')
    .split('\n')
    .filter((line) => line.split(' ')[1] === callId);

async function serve(env: Record<string, string>): Promise<ServerProcess> {
  return startServer({ dir, args: ['./tools.mjs'], env: { BATON_INLINE_BUDGET_MS: '300', ...env } });
}

function call(server: ServerProcess, name: string, ms: number, callId: string) {
  return fetch(`${server.address}/v1/calls`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ name, args: { ms }, sessionId: 'deploy', callId }),
  }).then((response) => response.json() as Promise<{ status: string; output: unknown }>);
}

async function record(server: ServerProcess, callId: string) {
  return (await fetch(`${server.address}/v1/calls/${callId}`)).json() as Promise<{
    status: string;
    error?: { code: string };
    attempt: number;
    detached: boolean;
  }>;
}

/** Asks until the call has ended: each ask a round trip, the server's own pace. */
async function ended(server: ServerProcess, callId: string) {
  for (;;) {
    const now = await record(server, callId);
    if (['succeeded', 'failed', 'cancelled', 'timed_out'].includes(now.status)) return now;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

describe('a server told to stop drains, and hands over what is left', () => {
  it('on SQLite: refuses new calls with 503 and Retry-After, lets the live ones end, and exits', async () => {
    const store = join(dir, 'drain.db');
    const server = await serve({
      BATON_STORE: store,
      BATON_DRAIN_MS: '20000',
      BATON_INLINE_BUDGET_MS: '10000',
    });
    const inline = call(server, 'nap', 1_200, 'inline-1');
    const background = await call(server, 'note', 600, 'background-1');
    expect(background.status).toBe('backgrounded');
    // Both are running: the server is told to stop.
    const stopped = server.stop();
    // Once it has heard the signal, its probe says so: a load balancer sends no more.
    while ((await fetch(`${server.address}/healthz`)).status !== 503);
    const refused = await fetch(`${server.address}/v1/calls`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'nap', args: { ms: 1 }, sessionId: 'deploy' }),
    });
    expect([
      refused.status,
      refused.headers.get('retry-after'),
      ((await refused.json()) as { error: { code: string } }).error.code,
    ]).toEqual([503, '5', 'shutting_down']);
    // The caller that waited gets its result: the drain let it end.
    expect(await inline).toMatchObject({ status: 'succeeded', output: 'rested 1200' });
    expect(await stopped).toBe(0);

    const again = await serve({ BATON_STORE: store });
    try {
      expect(await record(again, 'background-1')).toMatchObject({ status: 'succeeded', attempt: 1 });
      expect(await record(again, 'inline-1')).toMatchObject({ status: 'succeeded' });
    } finally {
      await again.stop();
    }
  });

  it('on SQLite: a call a short drain left is taken up by the next start, and nothing is cancelled', async () => {
    const store = join(dir, 'short.db');
    const server = await serve({ BATON_STORE: store, BATON_DRAIN_MS: '100' });
    const napping = call(server, 'nap', 4_000, 'left-nap');
    const charging = call(server, 'charge', 4_000, 'left-charge');
    // Their callers waited past the budget: they heard the calls go on in the background.
    expect((await napping).status).toBe('backgrounded');
    expect((await charging).status).toBe('backgrounded');
    expect(await server.stop()).toBe(0);

    const again = await serve({ BATON_STORE: store });
    try {
      // The idempotent call runs again and succeeds; the other ends interrupted, having run once.
      expect(await ended(again, 'left-nap')).toMatchObject({
        status: 'succeeded',
        attempt: 2,
        detached: true,
      });
      expect(await ended(again, 'left-charge')).toMatchObject({
        status: 'failed',
        error: { code: 'interrupted' },
      });
      expect(runsOf('left-charge')).toHaveLength(1);
      expect(runsOf('left-nap')).toHaveLength(2);
      // Their ends reach their session.
      const notifications = (await (
        await fetch(`${again.address}/v1/notifications?sessionId=deploy`)
      ).json()) as Array<{ callId: string; outcome: string }>;
      expect(notifications.map(({ callId, outcome }) => `${callId} ${outcome}`).sort()).toEqual([
        'left-charge failed',
        'left-nap succeeded',
      ]);
    } finally {
      await again.stop();
    }
  }, 30_000);

  it('on PostgreSQL: another process takes up at once what a short drain left, without waiting for a lease', async () => {
    // The server's own schema is shared by the runs of this test on one database: an id of this run.
    const callId = `moved-nap-${process.pid}-${Date.now()}`;
    const env = { BATON_STORE: postgres.url, BATON_DRAIN_MS: '100' };
    const leaving = await serve(env);
    const staying = await serve(env);
    try {
      expect((await call(leaving, 'nap', 3_000, callId)).status).toBe('backgrounded');
      expect(await leaving.stop()).toBe(0);
      expect(await ended(staying, callId)).toMatchObject({ status: 'succeeded', attempt: 2 });
      const pids = runsOf(callId).map((line) => line.split(' ')[2]);
      expect(new Set(pids).size).toBe(2);
    } finally {
      await staying.stop();
    }
  }, 30_000);

  it('stops listening before it stops answering: a request during the stop gets an answer or a refused connection', async () => {
    const server = await serve({
      BATON_STORE: join(dir, 'listener.db'),
      BATON_DRAIN_MS: '1500',
      BATON_INLINE_BUDGET_MS: '5000',
    });
    // A live call keeps the drain going for a while.
    const live = call(server, 'nap', 800, 'listener-1');
    await new Promise((resolve) => setTimeout(resolve, 100));
    let exited = false;
    const stopped = server.stop().then((code) => {
      exited = true;
      return code;
    });
    const outcomes = new Map<string, number>();
    const count = (what: string) => outcomes.set(what, (outcomes.get(what) ?? 0) + 1);
    const deadline = Date.now() + 20_000;
    await Promise.all(
      Array.from({ length: 4 }, async () => {
        // Until a while after the process is gone: the requests that come as it exits.
        while (Date.now() < deadline && !(exited && (outcomes.get('ECONNREFUSED') ?? 0) > 20)) {
          try {
            const response = await fetch(`${server.address}/v1/calls`, {
              method: 'POST',
              headers: { 'content-type': 'application/json' },
              body: JSON.stringify({ name: 'nap', args: { ms: 1 }, sessionId: 'late' }),
            });
            await response.arrayBuffer();
            // An answer: a call taken before the signal was heard, or 503 once it was.
            count(response.status === 503 ? '503' : 'answered');
          } catch (error) {
            const cause = (error as { cause?: { code?: string } }).cause;
            count(cause?.code ?? String(error));
          }
        }
      }),
    );
    expect(await live).toMatchObject({ status: 'succeeded' });
    expect(await stopped).toBe(0);
    // An answer, or a connection refused once the server stopped listening. A connection the
    // kernel completed, still in the listen queue at the very moment the listener closes, is
    // reset by the kernel, not by the server: at most one per caller, at that moment.
    expect(
      [...outcomes.keys()].filter(
        (outcome) => !['answered', '503', 'ECONNREFUSED', 'ECONNRESET'].includes(outcome),
      ),
    ).toEqual([]);
    expect(outcomes.get('ECONNRESET') ?? 0).toBeLessThanOrEqual(4);
    expect(outcomes.get('503')).toBeGreaterThan(0);
    expect(outcomes.get('ECONNREFUSED')).toBeGreaterThan(0);
  }, 60_000);
});
