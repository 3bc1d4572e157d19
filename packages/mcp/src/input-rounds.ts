import type { CallEvent } from '@baton/contracts';
import {
  CLIENT_CAPABILITIES_META_KEY,
  type InputRequiredResult,
  inputRequired,
  MissingRequiredClientCapabilityError,
  type ServerContext,
} from '@modelcontextprotocol/server';
import { filter } from 'rxjs';
import { mcpRequestOf } from './input-requests.js';
import { CAPABILITY } from './prepare-inputs.js';
import type { InputRound, Serving } from './serving.js';

type InputRequested = Extract<CallEvent, { type: 'input_requested' }>;

/** An answer is a result object; anything else (a number, a list) is asked for again. */
const isAnswer = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

export interface InputWatch {
  /** Resolves once the tool waits for input the client has not given (after a tick for its siblings). */
  readonly asked: Promise<void>;
  /** The input-required result that asks for it, its `requestState` sealing the round. */
  result(): Promise<InputRequiredResult>;
  close(): void;
}

/**
 * 2026-07-28's multi round-trip requests: what the tool asks for (`ctx.input`) is answered from the
 * round's `inputResponses`, by name; what the client did not give is asked for with an
 * input-required result. Its sealed `requestState` names the call, so the next round goes on with
 * the same execution instead of running the tool again. `previous` is the round this one answers.
 */
export function watchInputs(
  serving: Serving,
  callId: string,
  context: ServerContext,
  previous: InputRound | undefined,
): InputWatch {
  const { runtime } = serving;
  const answers = context.mcpReq.inputResponses ?? {};
  const pending = new Map<string, InputRequested>();
  let seq = previous?.seq ?? 0;
  let ask: () => void = () => {};
  const asked = new Promise<void>((resolve) => {
    ask = resolve;
  });
  const subscription = runtime
    // A first round's call is made after this subscription: nothing of it to read first.
    .follow({ callId }, { fresh: previous === undefined })
    .pipe(filter((event): event is InputRequested => event.type === 'input_requested'))
    .subscribe((event) => {
      seq = Math.max(seq, event.seq);
      // Asked and answered in a round before the last one.
      if (previous && event.seq <= previous.seq && !previous.asked.includes(event.name)) return;
      const answer = answers[event.name];
      if (isAnswer(answer)) {
        runtime.inputs.resolve(event.key, { value: answer }).catch(() => {
          // Not stored: the runtime reports its store's failures (failures$); the tool still waits.
        });
        return;
      }
      pending.set(event.name, event);
      setImmediate(ask);
    });

  async function result(): Promise<InputRequiredResult> {
    const envelope = context.mcpReq.envelope as Record<string, unknown> | undefined;
    const capabilities = (envelope?.[CLIENT_CAPABILITIES_META_KEY] ?? {}) as Record<string, unknown>;
    // Only what the client can answer is asked; the rest is refused to the tool, which decides.
    // When it can answer none of it, the request fails naming what it lacks.
    const missing = [...pending.values()].filter(
      (event) => capabilities[CAPABILITY[event.request.kind]] === undefined,
    );
    for (const event of missing) {
      pending.delete(event.name);
      const message = `the tool asks for ${CAPABILITY[event.request.kind]}, which the client did not declare`;
      await runtime.inputs.resolve(event.key, { error: message });
      if (pending.size === 0 && event === missing.at(-1)) {
        const capability = CAPABILITY[(missing[0] as InputRequested).request.kind];
        throw new MissingRequiredClientCapabilityError(
          { requiredCapabilities: { [capability]: {} } },
          message,
        );
      }
    }
    const inputRequests = Object.fromEntries(
      [...pending].map(([name, event]) => [name, mcpRequestOf(event.request)]),
    );
    const round: InputRound = { callId, asked: [...pending.keys()], seq };
    const requestState = await serving.requestStates?.mint(round);
    return inputRequired({
      inputRequests: inputRequests as Parameters<typeof inputRequired>[0]['inputRequests'],
      ...(requestState !== undefined ? { requestState } : {}),
    });
  }

  return { asked, result, close: () => subscription.unsubscribe() };
}
