import type { ExecutionMode } from '@baton/contracts';
import type { Runtime } from '@baton/runtime';
import type { RequestStateCodec } from '@modelcontextprotocol/server';
import type { Subscription } from 'rxjs';
import type { Cursors } from './cursors.js';
import type { McpScope } from './scope.js';

/** The two protocol generations one endpoint serves. */
export type Era = 'legacy' | 'modern';

/** What one MCP server instance serves: whose calls, in which generation, for which connection. */
export interface Serving {
  runtime: Runtime;
  scope: McpScope;
  era: Era;
  /** How often clients should poll `tasks/get`. */
  pollIntervalMs: number;
  /** How long the runtime keeps an ended call (tasks report it in their `ttl`); undefined: all kept. */
  retentionMs: number | undefined;
  /** The mode of a tool that names none (the runtime's `defaultMode`). */
  defaultMode: ExecutionMode;
  /** Whether the endpoint serves the background-control tools (when a tool may go to the background). */
  backgroundControl: boolean;
  /** The Baton session a call made over this connection belongs to, before the tenant's prefix. */
  sessionName: string;
  /** Keeps a subscription until the connection closes (a task's progress outlives its request). */
  hold(subscription: Subscription): void;
  /** Sends a notification outside any request: 2025-11-25's session stream. */
  notify(method: string, params: Record<string, unknown>): Promise<void>;
  /** Seals the cursors of `tasks/list` (HMAC), so that only those given are taken back. */
  cursors: Cursors;
  /** 2025-11-25: told as each request starts being handled and once it is answered (a session is busy meanwhile). */
  activity?: { begin(): void; end(): void };
  /** 2026-07-28: seals and opens the `requestState` of an input-required round (HMAC). */
  requestStates?: RequestStateCodec<InputRound>;
}

/** What an input-required round's `requestState` carries: the call, and what it was asked. */
export interface InputRound {
  callId: string;
  /** The names of the requests that round asked the client for. */
  asked: string[];
  /** The last event of the call that round saw. */
  seq: number;
}

/** Baton sessions of MCP calls are named under this prefix: plain calls, and calls made as tasks. */
export const CALL_SESSIONS = 'mcp:';
export const TASK_SESSIONS = 'mcp-task:';
