import type { JsonSchema } from './json-schema.js';

/**
 * What a running tool may ask its caller for (`ctx.input`): a form the user fills
 * (`elicitation`), a completion from the caller's own model (`sampling`, MCP's
 * `sampling/createMessage` params), or the caller's roots. MCP clients are asked in the protocol's
 * own way; any other caller answers through `runtime.inputs.resolve` with the key of the call's
 * `input_requested` event.
 */
export type InputRequest =
  | { kind: 'elicitation'; message: string; requestedSchema: JsonSchema }
  | { kind: 'sampling'; params: Record<string, unknown> }
  | { kind: 'roots' };

export interface InputOptions {
  /** What the request is called (letters, digits, `_`, `-`, `.`); unique in the call. */
  name?: string;
  timeoutMs?: number;
}

/** The user's answer to a form: accepted with its content, declined, or dismissed. */
export interface ElicitationResponse {
  action: 'accept' | 'decline' | 'cancel';
  content?: Record<string, unknown>;
}

/** What each kind of request is answered with. */
export type InputResponse<R extends InputRequest> = R extends { kind: 'elicitation' }
  ? ElicitationResponse
  : R extends { kind: 'roots' }
    ? { roots: Array<{ uri: string; name?: string }> }
    : Record<string, unknown>;
