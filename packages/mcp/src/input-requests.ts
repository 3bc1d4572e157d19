import type { CallEvent, InputRequest } from '@baton/contracts';
import type { ServerContext } from '@modelcontextprotocol/server';
import { filter } from 'rxjs';
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
export function forwardInputRequests(serving: Serving, callId: string, context: ServerContext) {
  const { runtime } = serving;
  return runtime
    .follow({ callId })
    .pipe(filter((event): event is InputRequested => event.type === 'input_requested'))
    .subscribe((event) => {
      context.mcpReq
        .send(mcpRequestOf(event.request))
        .then(
          (answer) => runtime.inputs.resolve(event.key, { value: answer }),
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
