import { type ServerProcess, startServer } from '@baton/test-support';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const A = 'token-of-tenant-a-0001';
const B = 'token-of-tenant-b-0001';
const OPERATOR = 'token-of-the-operator-01';
let server: ServerProcess;

beforeAll(async () => {
  server = await startServer({ env: { BATON_TOKENS: `a:${A},b:${B}`, BATON_OPERATOR_TOKENS: OPERATOR } });
});
afterAll(() => server.stop());

function call(token: string, body: object) {
  return fetch(`${server.address}/v1/calls`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
    // Far past any budget: a reply this late is a starved one, and fails the test.
    signal: AbortSignal.timeout(20_000),
  });
}

describe('one tenant cannot starve another', () => {
  it('tenant A floods the server with a minute-long call in every slot it can get, and tenant B is answered at once', async () => {
    // 100 calls of 60 s from four sessions: more than the 64 slots. Each goes to the background
    // at its budget, and keeps its slot.
    const flood = await Promise.all(
      Array.from({ length: 100 }, (_, i) =>
        call(A, { name: 'slow_report', args: { seconds: 60 }, sessionId: `flood-${i % 4}` }).then(
          (reply) => reply.json() as Promise<{ status: string }>,
        ),
      ),
    );
    expect(flood.every((reply) => reply.status === 'backgrounded')).toBe(true);
    // An operator sees the counters.
    const health = (await (
      await fetch(`${server.address}/healthz`, { headers: { authorization: `Bearer ${OPERATOR}` } })
    ).json()) as {
      stats: { running: number; queued: number };
    };
    // A holds its share, 48 of the 64 slots; its other calls wait.
    expect(health.stats).toMatchObject({ running: 48, queued: 52 });

    const reply = await call(B, { name: 'echo', args: { text: 'still here' }, sessionId: 'b' });
    expect(await reply.json()).toMatchObject({ status: 'succeeded', output: { text: 'still here' } });
  });
});
