import type { CallReply } from '@baton/contracts';
import type { Runtime } from '@baton/runtime';
import type { FastifyReply, FastifyRequest } from 'fastify';

export const SHUTTING_DOWN = 'the server is shutting down and takes no new requests: try again shortly';

/** A POST's call that the server refuses: its HTTP status, the API's code for it, and its words. */
export interface CallRefusal {
  status: 429 | 503;
  code: 'store_unavailable' | 'shutting_down' | 'overloaded' | 'quota_exceeded';
  message: string;
}

/**
 * Why a POST's call is refused, if it is (each with `Retry-After`).
 * - `overloaded` (429): a client holds as many calls waiting for workers as it may, in all or for
 *   the tenant; nothing was kept, and the same request later is taken.
 * - `closed`: the runtime began to stop while the request was on its way in (nothing was kept), or
 *   it stopped before it could hand the call over (kept, it goes on): either way the same request
 *   again, to another server, answers it.
 * - `persistence_failed`, of a call the store did not keep. The runtime gives that reply for a call
 *   it could not keep and for a stored call that ended so (its end, or what its `prepare` gave,
 *   refused by the store). Only the first is "not kept", and its id works again; the second is the
 *   call's end, answered to every POST of its id as any end is: a caller told "not kept" would make
 *   it again, and a tool that charges would charge twice. The store says which; when it cannot
 *   say, the caller comes back later.
 */
export async function refusalOf(
  runtime: Pick<Runtime, 'get'>,
  reply: CallReply,
): Promise<CallRefusal | undefined> {
  if (reply.status !== 'failed') return undefined;
  if (reply.error?.code === 'overloaded')
    return { status: 429, code: 'overloaded', message: reply.error.message };
  if (reply.error?.code === 'closed') return { status: 503, code: 'shutting_down', message: SHUTTING_DOWN };
  if (reply.error?.code !== 'persistence_failed') return undefined;
  const { message } = reply.error;
  try {
    if (await runtime.get(reply.callId)) return undefined;
    return { status: 503, code: 'store_unavailable', message: `the call was not kept: ${message}` };
  } catch (error) {
    return {
      status: 503,
      code: 'store_unavailable',
      message: `the call may not have been kept (${message}), and the store could not say: ${(error as Error).message}`,
    };
  }
}

/**
 * A runtime that drains (a deploy) takes no new calls: nor does its server, which says when to come
 * back; a load balancer's probe hears it too, and sends the next requests elsewhere. `jsonRpc`: the
 * route answered in JSON-RPC (MCP).
 */
export function drainingHook(runtime: Pick<Runtime, 'closing'>, jsonRpc: string, retryAfterSeconds: number) {
  return async (request: FastifyRequest, reply: FastifyReply) => {
    if (!runtime.closing) return;
    // Each answer closes its connection: none is left idle for the listener's close to reset.
    reply.code(503).header('retry-after', String(retryAfterSeconds)).header('connection', 'close');
    if (request.routeOptions.url === jsonRpc) {
      return reply.send({ jsonrpc: '2.0', error: { code: -32000, message: SHUTTING_DOWN }, id: null });
    }
    return reply.send({ error: { code: 'shutting_down', message: SHUTTING_DOWN } });
  };
}
