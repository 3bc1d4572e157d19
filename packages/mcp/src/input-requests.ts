import type { CallEvent, InputRequest } from '@baton/contracts';
import type { ServerContext } from '@modelcontextprotocol/server';
import { filter, type Observable } from 'rxjs';
import type { Serving } from './serving.js';

/** An input request as the MCP request that asks a client for it. */
export function mcpRequestOf(request: InputRequest): {
  method: 'elicitation/create' | 'sampling/createMessage' | 'roots/list';
  params: Record<string, unknown>;
} {
  switch (request.kind) {
    case 'elicitation':
      return {
        method: 'elicitation/create',
        params: { mode: 'form', message: request.message, requestedSchema: request.requestedSchema },
      };
    case 'sampling':
      return { method: 'sampling/createMessage', params: request.params };
    case 'roots':
      return { method: 'roots/list', params: {} };
  }
}

type InputRequested = Extract<CallEvent, { type: 'input_requested' }>;

/**
 * 2025-11-25: what the tool asks for (`ctx.input`) while the client waits for its result is asked
 * of the client, as a request related to its `tools/call` on the session; the answer, or the
 * client's refusal, goes back to the tool. Until the subscription it returns ends.
 */
export function forwardInputRequests(
  serving: Serving,
  callId: string,
  context: ServerContext,
  {
    meta,
    events$,
  }: {
    meta?: Record<string, unknown>;
    /** The call's events, when the caller follows them already (one follower for all it forwards). */
    events$?: Observable<CallEvent>;
  } = {},
) {
  const { runtime } = serving;
  const ask = async (event: InputRequested) => {
    // A request answered before (a task's earlier tasks/result) is not asked again.
    if (!(await runtime.inputs.pending(callId)).some((input) => input.key === event.key)) return undefined;
    const { method, params } = mcpRequestOf(event.request);
    return context.mcpReq.send({ method, params: meta ? { ...params, _meta: meta } : params } as never);
  };
  return (events$ ?? runtime.follow({ callId }))
    .pipe(filter((event): event is InputRequested => event.type === 'input_requested'))
    .subscribe((event) => {
      ask(event)
        .then(
          (answer) =>
            answer === undefined ? undefined : runtime.inputs.resolve(event.key, { value: answer }),
          (error: unknown) =>
            runtime.inputs.resolve(event.key, {
              error: `the client did not answer: ${error instanceof Error ? error.message : String(error)}`,
            }),
        )
        .catch(() => {
          // A resolution that could not be stored: the runtime reports its store's failures
          // (failures$), and the tool's wait ends with its timeout or its call.
        });
    });
}
