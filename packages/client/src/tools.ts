import type { AnyTool, ToolCallOf } from '@baton/contracts';

/**
 * The tools a client is typed by: a list of tools (`typeof tools`), or a module's exports
 * (`typeof import('./tools.js')`), whose tools are its `tools` list or else those of its exports
 * made with `defineTool`.
 */
export type ToolSource = readonly AnyTool[] | Record<string, unknown>;

/** The tools of a `ToolSource`. */
export type ToolsOf<S extends ToolSource> = S extends readonly AnyTool[]
  ? S[number]
  : S extends { tools: readonly AnyTool[] }
    ? S['tools'][number]
    : Extract<S[keyof S], AnyTool>;

/** What `call` sends: a call of a tool by its name, in a session. */
export interface CallInput {
  /** The tool. */
  name: string;
  /** Its arguments; omitted means `{}`. */
  args?: unknown;
  /** The conversation the call belongs to. */
  sessionId: string;
  /** Idempotency key: the same id twice is the same call. */
  callId?: string;
  messageId?: string;
}

/** A call of one of `T`, typed by its name: `args` are that tool's arguments (its schema's input). */
export type ToolCallInput<T extends AnyTool> = ToolCallOf<T, CallInput>;
