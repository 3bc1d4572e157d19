import type { CallReply } from '@baton/contracts';
import type { CallRequest } from './options.js';
import type { Runtime } from './runtime-api.js';

/**
 * For agent loops with an approval step of their own (the AI SDK's, the Agents SDK's): the Baton
 * call is made when the model asks for it, so that its approval is recorded, and this says whether
 * the tool asked for one. It stays true once the approval is given: the loops ask again when they
 * read the answer.
 */
export async function callAskingApproval(
  runtime: Runtime,
  request: CallRequest & { callId: string },
): Promise<boolean> {
  await runtime.call(request);
  return (await runtime.get(request.callId))?.approval !== undefined;
}

/**
 * The loop went on with the call approved (a rejected one never gets here): approves it, and
 * answers with its reply within its inline budget, or that it goes on in the background.
 */
export async function runApproved(
  runtime: Runtime,
  request: CallRequest & { callId: string },
  signal?: AbortSignal,
): Promise<CallReply> {
  await runtime.inputs.approve(request.callId);
  return (await runtime.wait(request.callId, signal ? { signal } : {})) ?? runtime.call(request);
}
