import type { CallReply, ExecutionMode, Notification } from './call.js';
import type { AnyTool } from './define-tool.js';
import { type JsonSchema, toJsonSchema } from './schema.js';
import { strictJsonSchema } from './strict-schema.js';

/** A tool's mode as a runtime would run it: its own, else the runtime's default. */
export interface DeclarationOptions {
  defaultMode?: ExecutionMode;
}

function modeOf(tool: AnyTool, options: DeclarationOptions): ExecutionMode {
  return tool.execution.mode ?? options.defaultMode ?? 'inline';
}

/** The Chat Completions function tool: `strict` when the schema allows (see `strictJsonSchema`). */
export interface OpenAIFunctionTool {
  type: 'function';
  function: { name: string; description: string; parameters: JsonSchema; strict: boolean };
}

export function toOpenAITool(tool: AnyTool): OpenAIFunctionTool {
  const { name, description, parameters, strict } = toOpenAIResponsesTool(tool);
  return { type: 'function', function: { name, description, parameters, strict } };
}

/**
 * The function tool of the Responses API and the Agents SDK: flat, `strict` when the schema allows,
 * and `async` (OpenAI's async tool calling: the model goes on without waiting for the output) for a
 * tool the runtime may answer before it ends.
 */
export interface OpenAIResponsesTool {
  type: 'function';
  name: string;
  description: string;
  parameters: JsonSchema;
  strict: boolean;
  async?: true;
}

export function toOpenAIResponsesTool(tool: AnyTool, options: DeclarationOptions = {}): OpenAIResponsesTool {
  const parameters = toJsonSchema(tool.input);
  const strict = strictJsonSchema(parameters);
  return {
    type: 'function',
    name: tool.name,
    description: tool.description,
    parameters: strict ?? parameters,
    strict: strict !== undefined,
    ...(taskSupportOf(tool, options) === 'forbidden' ? {} : { async: true }),
  };
}

export interface AnthropicTool {
  name: string;
  description: string;
  input_schema: JsonSchema;
}

export function toAnthropicTool(tool: AnyTool): AnthropicTool {
  return { name: tool.name, description: tool.description, input_schema: toJsonSchema(tool.input) };
}

export interface GeminiFunctionDeclaration {
  name: string;
  description: string;
  parametersJsonSchema: JsonSchema;
  /**
   * Gemini Live: the model keeps talking while a `NON_BLOCKING` function runs, and waits for a
   * `BLOCKING` one. Always said: Live models from 3.8 on take an omitted behaviour as `NON_BLOCKING`.
   */
  behavior: 'BLOCKING' | 'NON_BLOCKING';
}

export function toGeminiFunctionDeclaration(
  tool: AnyTool,
  options: DeclarationOptions = {},
): GeminiFunctionDeclaration {
  return {
    name: tool.name,
    description: tool.description,
    parametersJsonSchema: toJsonSchema(tool.input),
    // Exactly the tools the runtime may answer before they end (their mode, or an approval to wait for).
    behavior: taskSupportOf(tool, options) === 'forbidden' ? 'BLOCKING' : 'NON_BLOCKING',
  };
}

/** The `response` of a Gemini function response: what the model is given of a call or its end. */
export type GeminiFunctionResult = { output: unknown } | { error: unknown };

/**
 * A reply as the `response` of a Gemini (or ADK) function response: the output (for a call gone to
 * the background, the acknowledgement), or the failure's message.
 */
export function toGeminiResponse(
  reply: Pick<CallReply, 'status' | 'output' | 'error'>,
): GeminiFunctionResult {
  return reply.status === 'succeeded' || reply.status === 'backgrounded'
    ? { output: reply.output }
    : { error: reply.error?.message ?? reply.output };
}

/** A background call's end (or update) as the `response` of its later function response: the result, or why there is none. */
export function toGeminiNotificationResponse(
  notification: Pick<Notification, 'outcome' | 'output' | 'body'>,
): GeminiFunctionResult {
  return notification.outcome === 'succeeded' || notification.outcome === 'running'
    ? { output: notification.output }
    : { error: notification.body };
}

export type McpTaskSupport = 'forbidden' | 'optional' | 'required';

export interface McpToolDeclaration {
  name: string;
  title?: string;
  description: string;
  inputSchema: JsonSchema;
  outputSchema?: JsonSchema;
  annotations: { title?: string; readOnlyHint: boolean; idempotentHint: boolean };
  execution: { taskSupport: McpTaskSupport };
}

const TASK_SUPPORT: Record<ExecutionMode, McpTaskSupport> = {
  inline: 'forbidden',
  auto: 'optional',
  background: 'required',
};

/**
 * Whether an MCP client may or must call a tool as a task: an `inline` tool never runs as one, a
 * `background` tool always does, and an `auto` tool, or one that waits for an approval, may.
 */
export function taskSupportOf(tool: AnyTool, options: DeclarationOptions = {}): McpTaskSupport {
  const support = TASK_SUPPORT[modeOf(tool, options)];
  return support === 'forbidden' && tool.execution.needsApproval ? 'optional' : support;
}

export function toMcpTool(tool: AnyTool, options: DeclarationOptions = {}): McpToolDeclaration {
  const declaration: McpToolDeclaration = {
    name: tool.name,
    description: tool.description,
    inputSchema: toJsonSchema(tool.input),
    annotations: { readOnlyHint: tool.execution.readOnly, idempotentHint: tool.execution.idempotent },
    execution: { taskSupport: taskSupportOf(tool, options) },
  };
  if (tool.title !== undefined) {
    declaration.title = tool.title;
    declaration.annotations.title = tool.title;
  }
  if (tool.output !== undefined) declaration.outputSchema = toJsonSchema(tool.output, 'output');
  return declaration;
}
