import type { CallReply } from '@baton/contracts';
import type { CallRequest } from '../options.js';
import type { Runtime } from '../runtime-api.js';

/** A call request with the id the framework gave it: every step of an approval names the same call. */
type NamedCall = CallRequest & { callId: string };

/**
 * For agent loops with an approval step of their own (the AI SDK's, the Agents SDK's): the Baton
 * call is made when the model asks for it, so that its approval is recorded, and this says whether
 * the tool asked for one. It stays true once the approval is given: the loops ask again when they
 * read the answer.
 */
export async function callAskingApproval(runtime: Runtime, request: NamedCall): Promise<boolean> {
  await runtime.call(request);
  return (await runtime.get(request.callId))?.approval !== undefined;
}

/**
 * For frameworks that pause a run to ask the user (LangGraph's `interrupt()`, ADK's tool
 * confirmation, Mastra's suspend): the Baton call is made and recorded, and this says whether it
 * waits for its approval now, so that the run must pause. False for a call decided already (the
 * same call again, after the pause): its reply is `replyOf`'s.
 */
export async function callAwaitingApproval(runtime: Runtime, request: NamedCall): Promise<boolean> {
  await runtime.call(request);
  return (await runtime.get(request.callId))?.approval === 'pending';
}

/** The call's reply within its inline budget, or that it goes on in the background. */
export async function replyOf(
  runtime: Runtime,
  request: NamedCall,
  signal?: AbortSignal,
): Promise<CallReply> {
  return (await runtime.wait(request.callId, signal ? { signal } : {})) ?? runtime.call(request);
}

/** The user's decision on a call that waits for its approval; a reason for a rejection is told to the model. */
export interface ApprovalDecision {
  approved: boolean;
  reason?: string;
}

/** The user decided: the call is approved or rejected, and answers with its reply (see `replyOf`). */
export async function runDecided(
  runtime: Runtime,
  request: NamedCall,
  { approved, reason }: ApprovalDecision,
  signal?: AbortSignal,
): Promise<CallReply> {
  if (approved) await runtime.inputs.approve(request.callId);
  else await runtime.inputs.reject(request.callId, reason ?? 'rejected by the user');
  return replyOf(runtime, request, signal);
}

/** The loop went on with the call approved (a rejected one never gets here): see `runDecided`. */
export function runApproved(runtime: Runtime, request: NamedCall, signal?: AbortSignal): Promise<CallReply> {
  return runDecided(runtime, request, { approved: true }, signal);
}

/**
 * What a bridge pauses a run with when a Baton call waits for its approval (LangGraph's
 * `interrupt()`, Mastra's suspend, ADK's confirmation payload): resume it with an `ApprovalDecision`.
 */
export interface ApprovalRequest {
  type: 'baton_approval';
  callId: string;
  tool: string;
  args: unknown;
}

/** The `ApprovalRequest` of a call that waits for its approval. */
export function approvalRequestOf(request: NamedCall): ApprovalRequest {
  return { type: 'baton_approval', callId: request.callId, tool: request.name, args: request.args };
}
