import type { LogStream, Progress } from './call.js';

/** What a tool's `execute` gets besides its arguments. */
export interface ToolContext {
  readonly callId: string;
  readonly sessionId: string;
  readonly toolName: string;
  /** Aborted when the call is cancelled or times out; a result that arrives after that is dropped. */
  readonly signal: AbortSignal;
  /** 1 for the first run of a call. */
  readonly attempt: number;
  /** Reports progress: a bus event, and the last one is kept on the record. */
  progress(progress: Progress): void;
  /** Sets the call's status text (what it is doing now). */
  status(text: string): void;
  /** Appends to the call's output; the record keeps its last characters. */
  log(stream: LogStream, chunk: string): void;
}
