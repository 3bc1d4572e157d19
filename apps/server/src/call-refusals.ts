import type { CallReply } from '@baton/contracts';
import type { Runtime } from '@baton/runtime';

/**
 * Why a POST's call is answered 503, if it is: a `persistence_failed` reply of a call the store
 * did not keep. The runtime gives that reply for a call it could not keep and for a stored call
 * that ended so (its end, or what its `prepare` gave, refused by the store). Only the first is
 * "not kept", and its id works again; the second is the call's end, answered to every POST of its
 * id as any end is: a caller told "not kept" would make it again, and a tool that charges would
 * charge twice. The store says which; when it cannot say, the caller comes back later.
 */
export async function unkeptCall(
  runtime: Pick<Runtime, 'get'>,
  reply: CallReply,
): Promise<string | undefined> {
  if (reply.status !== 'failed' || reply.error?.code !== 'persistence_failed') return undefined;
  const { message } = reply.error;
  try {
    if (await runtime.get(reply.callId)) return undefined;
    return `the call was not kept: ${message}`;
  } catch (error) {
    return `the call may not have been kept (${message}), and the store could not say: ${(error as Error).message}`;
  }
}
