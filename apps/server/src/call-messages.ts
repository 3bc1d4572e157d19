import { isBatonError, type SteerReceipt } from '@baton/contracts';
import type { Runtime } from '@baton/runtime';
import type { FastifyReply } from 'fastify';
import { fail } from './api-errors.js';
import type { TenantScope } from './tenancy.js';

/** What the API answers for a message the runtime refused: its status, under the runtime's own code. */
const REFUSED = {
  call_not_found: 404,
  invalid_arguments: 400,
  not_steerable: 409,
  call_ended: 409,
  limit_exceeded: 409,
} as const;

/**
 * `POST /v1/calls/:id/messages`: steering. The answer comes once the message is stored; a refusal
 * keeps the runtime's code and words, written for whoever sends the message (a model, often).
 */
export async function sendMessage(
  runtime: Pick<Runtime, 'steer'>,
  scope: TenantScope,
  id: string,
  message: unknown,
  reply: FastifyReply,
  /** The sender's key: the same message sent again is stored once (see `runtime.steer`). */
  idempotencyKey?: string,
): Promise<SteerReceipt | FastifyReply> {
  try {
    const receipt = await runtime.steer(scope.inside(id), message, {
      caller: scope.caller,
      ...(idempotencyKey === undefined ? {} : { idempotencyKey }),
    });
    return reply.code(202).send({ callId: id, messageSeq: receipt.messageSeq });
  } catch (error) {
    if (!isBatonError(error) || !(error.code in REFUSED)) throw error;
    const status = REFUSED[error.code as keyof typeof REFUSED];
    const inside = scope.inside(id);
    return fail(reply, status, error.code, error.message.replaceAll(inside, id));
  }
}
