/**
 * The callers of the suites with real processes: each is careful, sending its call again with the
 * same id, to another API server, until one request is answered 200, then learning its end.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { ServerProcess } from '@baton/test-support';
import type { CallerRecord } from './fault-ledger.js';

const TERMINAL = new Set(['succeeded', 'failed', 'cancelled', 'timed_out']);
const TOOL_NAMES = ['work', 'charge', 'refuse'] as const;
/**
 * The tool of the n-th call: with `steered`, one call in four is steered (its caller sends it two
 * messages at once, then `finish`; it tells an update of each, and its session is reminded that it
 * still runs); the servers must then serve fault-tools.mjs.
 */
const toolOf = (n: number, steered: boolean): CallerRecord['tool'] =>
  (steered && n % 4 === 3 ? 'steered' : TOOL_NAMES[n % 3]) as CallerRecord['tool'];

/** One POST, or undefined when no answer came (a connection reset, a server gone). */
export async function post(to: ServerProcess, body: object) {
  try {
    const response = await fetch(`${to.address}/v1/calls`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(60_000),
    });
    return { http: response.status, reply: (await response.json()) as NonNullable<CallerRecord['end']> };
  } catch {
    // No answer: a careful caller sends the same id again, elsewhere (counted in `requests`).
    return undefined;
  }
}

/** Reads the call from the API servers in turn until it has ended. */
async function endOf(
  clients: readonly ServerProcess[],
  callId: string,
  turn: number,
): Promise<CallerRecord['end']> {
  const until = Date.now() + 120_000;
  for (let next = turn; Date.now() < until; next++) {
    const from = clients[next % clients.length] as ServerProcess;
    const response = await fetch(`${from.address}/v1/calls/${callId}`).catch(() => undefined);
    if (response?.status === 200) {
      const record = (await response.json()) as NonNullable<CallerRecord['end']>;
      if (TERMINAL.has(record.status)) return record;
    } else await response?.body?.cancel();
    await sleep(200);
  }
  return undefined;
}

type SentMessage = NonNullable<CallerRecord['messages']>[number];

/**
 * A careful sender of one message: it sends it, with its key, until one request is answered 202
 * (or refused 409: the call ended), to the API servers in turn.
 */
async function sendMessage(
  clients: readonly ServerProcess[],
  callId: string,
  text: string,
  first: number,
): Promise<SentMessage> {
  const sent: SentMessage = { text, key: `${callId}:${text}`, requests: 0 };
  const until = Date.now() + 60_000;
  for (let turn = first; Date.now() < until; turn++) {
    sent.requests++;
    const to = clients[turn % clients.length] as ServerProcess;
    const response = await fetch(`${to.address}/v1/calls/${callId}/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ message: text, idempotencyKey: sent.key }),
      signal: AbortSignal.timeout(30_000),
    }).catch(() => undefined);
    const body = (await response?.json().catch(() => undefined)) as
      | { messageSeq?: number; error?: { code: string } }
      | undefined;
    if (response?.status === 202 && typeof body?.messageSeq === 'number') {
      sent.seq = body.messageSeq;
      return sent;
    }
    if (response?.status === 409) {
      sent.refused = body?.error?.code ?? 'refused';
      return sent;
    }
    await sleep(300);
  }
  return sent;
}

/** Steers a call: two messages at once (to two API servers), then `finish` once both are stored. */
async function steer(clients: readonly ServerProcess[], callId: string, turn: number) {
  const both = await Promise.all([
    sendMessage(clients, callId, 'm1', turn),
    sendMessage(clients, callId, 'm2', turn + 1),
  ]);
  return [...both, await sendMessage(clients, callId, 'finish', turn)];
}

/** A careful caller: it sends its call until one request is answered 200, then learns its end. */
async function caller(
  clients: readonly ServerProcess[],
  n: number,
  callId: string,
  shared: boolean,
  first: number,
  steered: boolean,
): Promise<CallerRecord> {
  const tool = toolOf(n, steered);
  const ms = n % 5 === 0 ? 1_500 : 40 + (n % 4) * 70;
  // A steered call runs until its messages are in, seconds under the faults: its session is
  // reminded that it still runs.
  const reminders = tool === 'steered' ? { notifyAfterMs: [1_500, 4_000, 8_000] } : {};
  const body = { name: tool, args: { n, ms }, sessionId: `agent-${n % 4}`, callId, ...reminders };
  const entry: CallerRecord = { callId, tool, n, shared, requests: 0, answered: undefined, end: undefined };
  const until = Date.now() + 90_000;
  for (let turn = first; Date.now() < until; turn++) {
    entry.requests++;
    const answer = await post(clients[turn % clients.length] as ServerProcess, body);
    if (answer?.http === 200) {
      entry.answered = answer.reply.status;
      if (tool === 'steered') entry.messages = await steer(clients, callId, turn);
      entry.end = TERMINAL.has(answer.reply.status) ? answer.reply : await endOf(clients, callId, turn);
      return entry;
    }
    await sleep(300);
  }
  return entry;
}

/**
 * `callers` careful callers, each making calls one after another until `stop.done`, on the API
 * servers in `clients` (the list as it is at each request: servers come and go). One call in seven
 * is sent by two callers at once, to two servers.
 */
export async function load(
  clients: readonly ServerProcess[],
  stop: { done: boolean },
  callers: number,
  /** One call in four is steered (the servers serve fault-tools.mjs). */
  { steered = false }: { steered?: boolean } = {},
): Promise<CallerRecord[]> {
  const ledger: CallerRecord[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: callers }, async () => {
      while (!stop.done) {
        const n = next++;
        const callId = `call-${n}`;
        const both = n % 7 === 0;
        const sent = both
          ? [caller(clients, n, callId, true, n, steered), caller(clients, n, callId, true, n + 1, steered)]
          : [caller(clients, n, callId, false, n, steered)];
        ledger.push(...(await Promise.all(sent)));
      }
    }),
  );
  return ledger;
}
