import type { CallReply, InputRequest } from '@baton/contracts';
import {
  CLIENT_CAPABILITIES_META_KEY,
  type InputRequiredResult,
  inputRequired,
  MissingRequiredClientCapabilityError,
  ProtocolError,
  ProtocolErrorCode,
  type ServerContext,
} from '@modelcontextprotocol/server';
import { mcpRequestOf } from './input-requests.js';

/** The client capability that answering each kind of request takes. */
export const CAPABILITY: Record<InputRequest['kind'], string> = {
  elicitation: 'elicitation',
  sampling: 'sampling',
  roots: 'roots',
};

/** Rounds of input a 2025-11-25 request gathers for `prepare` before it gives up. */
const MAX_ROUNDS = 10;

/** What a tool's `prepare` asks for, when the runtime answered `input_required`. */
export function preparedInputsOf(reply: CallReply): Record<string, InputRequest> | undefined {
  return reply.status === 'failed' && reply.error?.code === 'input_required' ? reply.error.inputs : undefined;
}

/** The client's declared capabilities (2026-07-28: in the request's envelope). */
function declared(context: ServerContext): Record<string, unknown> {
  const envelope = context.mcpReq.envelope as Record<string, unknown> | undefined;
  return (envelope?.[CLIENT_CAPABILITIES_META_KEY] ?? {}) as Record<string, unknown>;
}

/**
 * 2026-07-28: what `prepare` asks for is an input-required result, with no request state: the
 * call has not begun, so the next round is the same request with `inputResponses`, and `prepare`
 * runs again with them (MCP's multi round-trip requests, as the specification draws them).
 */
export function prepareRound(
  context: ServerContext,
  asked: Record<string, InputRequest>,
): InputRequiredResult {
  const capabilities = declared(context);
  for (const request of Object.values(asked)) {
    const capability = CAPABILITY[request.kind];
    if (capabilities[capability] === undefined) {
      throw new MissingRequiredClientCapabilityError(
        { requiredCapabilities: { [capability]: {} } },
        `the tool asks for ${capability} before it begins, which the client did not declare`,
      );
    }
  }
  const inputRequests = Object.fromEntries(
    Object.entries(asked).map(([name, request]) => [name, mcpRequestOf(request)]),
  );
  return inputRequired({
    inputRequests: inputRequests as Parameters<typeof inputRequired>[0]['inputRequests'],
  });
}

/**
 * 2025-11-25: what `prepare` asks for is asked of the client on its session, as requests related
 * to the `tools/call`, and the call is made again with the answers, until `prepare` has all it
 * asks for.
 */
export async function withPreparedInputs(
  context: ServerContext,
  call: (inputs: Record<string, unknown>) => Promise<CallReply>,
): Promise<CallReply> {
  const inputs: Record<string, unknown> = {};
  for (let round = 0; round < MAX_ROUNDS; round++) {
    const reply = await call(inputs);
    const asked = preparedInputsOf(reply);
    if (!asked) return reply;
    for (const [name, request] of Object.entries(asked)) {
      const { method, params } = mcpRequestOf(request);
      inputs[name] = await context.mcpReq.send({ method, params } as never);
    }
  }
  throw new ProtocolError(
    ProtocolErrorCode.InternalError,
    `the tool still asked for input after ${MAX_ROUNDS} rounds`,
  );
}
