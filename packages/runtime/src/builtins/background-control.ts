import {
  type AnyTool,
  type Caller,
  type CallRecord,
  defineTool,
  isBatonError,
  isTerminalStatus,
  type JsonSchema,
  MAX_MESSAGES_PER_CALL,
  ToolError,
  type ToolRegistry,
} from '@baton/contracts';
import { BACKGROUND_CONTROL, type BackgroundControlTool } from '../builtin-names.js';
import { eventNameOfKey } from '../keys.js';
import { BACKGROUND_MESSAGES, STEERING_MESSAGES } from '../messages.js';
import { invalidArgumentsMessage } from '../outcome.js';
import type { Runtime } from '../runtime-api.js';

/** `wait_background` waits this long unless told otherwise, and never longer than the maximum. */
export const DEFAULT_WAIT_MS = 30_000;
export const MAX_WAIT_MS = 300_000;
/** A caller told of a wait that goes on (`onStillWaiting`) is told this often. */
export const WAIT_BEAT_MS = 10_000;

export type BackgroundControlHost = Pick<Runtime, 'get' | 'list' | 'cancel' | 'wait' | 'steer'> & {
  /** Whether the caller may reach a call of a tool (its scope): `Runtime`'s own, when the host is one. */
  access?: Pick<Runtime['access'], 'scopeRefusal'>;
  tools?: Pick<Runtime['tools'], 'get'>;
};

const CALL_ID = {
  type: 'string',
  description: 'The call_id (or run_id) the background acknowledgement gave',
  minLength: 1,
} as const;

/** The input of a tool about one call: its id. */
const ONE_CALL = {
  type: 'object',
  properties: { call_id: CALL_ID },
  required: ['call_id'],
  additionalProperties: false,
} as const;

/** What a model is shown of a call: where it is, how far it got, and how it ended. */
function statusOf(record: CallRecord): Record<string, unknown> {
  const status: Record<string, unknown> = {
    call_id: record.callId,
    tool: record.toolName,
    status: record.status,
  };
  if (record.run) status.title = record.run.title;
  if (record.approval === 'pending') status.approval = 'pending';
  // What it waits for, by the event's name: the key itself carries the call's id, tenant and all.
  if (record.waitingFor !== undefined) status.waiting_for = eventNameOfKey(record.waitingFor) ?? 'an event';
  if (record.progress) status.progress = record.progress;
  if (record.statusText) status.status_text = record.statusText;
  if (record.outputTail) status.output_tail = record.outputTail;
  if (record.update) {
    status.update = record.update.value;
    status.update_seq = record.update.updateSeq;
  }
  if (record.status === 'succeeded') status.result = record.output;
  else if (record.error) status.error = record.error.message;
  return status;
}

/**
 * Who runs a background-control tool: the session whose calls it lists, which calls it reaches,
 * how a wait is bounded and what stops it.
 */
export interface BackgroundCaller {
  sessionId: string;
  /**
   * Who asks (the tool context's `caller`): a call of a tool its scopes do not allow is out of its
   * reach, as it would be to call. Default: trusted.
   */
  caller?: Caller;
  signal?: AbortSignal;
  /**
   * The call id alone reaches a call, from any session: the host resolves only the ids the caller
   * may reach (a tenant's own). Default false: only the caller's session's calls.
   */
  byCallId?: boolean;
  /** The longest one wait lasts for this caller, whatever it asks; past it, the call is still running. */
  maxWaitMs?: number;
  /** Told every `WAIT_BEAT_MS` that a wait goes on, with how long it has waited: a sign of life. */
  onStillWaiting?: (waitedMs: number) => void;
  /**
   * Whether a later notification brings this caller a call's end. Default true; a caller that gets
   * none is told, when a wait ends first, to wait again.
   */
  notified?: boolean;
}

/** The call, when the caller reaches it; the same refusal whether it is out of reach or none. */
async function reachedCall(
  host: BackgroundControlHost,
  callId: string,
  caller: BackgroundCaller,
): Promise<CallRecord> {
  const record = await host.get(callId);
  const refusal =
    record && caller.caller && host.access?.scopeRefusal(caller.caller, host.tools?.get(record.toolName));
  if (refusal) throw new ToolError(refusal.message);
  if (caller.byCallId) {
    if (!record) throw new ToolError(BACKGROUND_MESSAGES.unknownId(callId));
    return record;
  }
  if (!record || record.sessionId !== caller.sessionId) {
    throw new ToolError(BACKGROUND_MESSAGES.unknownCall(callId));
  }
  return record;
}

/** Waits up to `ms` for the call to end; with `onStillWaiting`, in beats that report the time waited. */
async function waitInBeats(
  host: BackgroundControlHost,
  callId: string,
  ms: number,
  caller: BackgroundCaller,
): Promise<void> {
  const signal = caller.signal ? { signal: caller.signal } : {};
  if (!caller.onStillWaiting) {
    await host.wait(callId, { timeoutMs: ms, ...signal });
    return;
  }
  for (let waited = 0; waited < ms; ) {
    const beat = Math.min(WAIT_BEAT_MS, ms - waited);
    const reply = await host.wait(callId, { timeoutMs: beat, ...signal });
    if (reply === undefined || reply.status !== 'backgrounded' || caller.signal?.aborted) return;
    waited += beat;
    if (waited < ms) caller.onStillWaiting(waited);
  }
}

type Operation = (input: never, caller: BackgroundCaller) => Promise<unknown>;

/** Who touches the call, for the runtime to decide (see `AsCaller`). */
function asCaller({ caller }: BackgroundCaller): { caller?: Caller } {
  return caller ? { caller } : {};
}

/** What each tool does, given arguments its schema accepted. */
function operationsOf(host: BackgroundControlHost): Record<BackgroundControlTool, Operation> {
  return {
    async check_background({ call_id }: { call_id: string }, caller) {
      return statusOf(await reachedCall(host, call_id, caller));
    },
    async wait_background(
      { call_id, timeout_ms = DEFAULT_WAIT_MS }: { call_id: string; timeout_ms?: number },
      caller,
    ) {
      const waitMs = Math.min(timeout_ms, caller.maxWaitMs ?? MAX_WAIT_MS);
      const before = await reachedCall(host, call_id, caller);
      if (!isTerminalStatus(before.status)) await waitInBeats(host, call_id, waitMs, caller);
      const now = await reachedCall(host, call_id, caller);
      if (isTerminalStatus(now.status)) return statusOf(now);
      const message =
        caller.notified === false
          ? BACKGROUND_MESSAGES.waitAgain(waitMs, call_id)
          : BACKGROUND_MESSAGES.stillRunning(waitMs);
      return { ...statusOf(now), message };
    },
    async cancel_background({ call_id }: { call_id: string }, caller) {
      const record = await reachedCall(host, call_id, caller);
      const cancelled =
        !isTerminalStatus(record.status) &&
        (await host.cancel(call_id, BACKGROUND_MESSAGES.cancelReason, asCaller(caller)));
      if (!cancelled) {
        const { status } = await reachedCall(host, call_id, caller);
        throw new ToolError(BACKGROUND_MESSAGES.alreadyEnded(call_id, status));
      }
      return { call_id, status: 'cancelled' };
    },
    async steer_background({ call_id, message }: { call_id: string; message: string }, caller) {
      await reachedCall(host, call_id, caller);
      try {
        const { messageSeq } = await host.steer(call_id, message, asCaller(caller));
        return { call_id, message_seq: messageSeq, status: 'sent', note: BACKGROUND_MESSAGES.steered };
      } catch (error) {
        // A refusal is for the model, in the call id it gave (a host may see the call under another).
        if (!isBatonError(error) || error.code === 'internal_error') throw error;
        if (error.code === 'call_ended') {
          const { status } = await reachedCall(host, call_id, caller);
          throw new ToolError(STEERING_MESSAGES.ended(call_id, status));
        }
        if (error.code === 'limit_exceeded') {
          throw new ToolError(STEERING_MESSAGES.tooMany(call_id, MAX_MESSAGES_PER_CALL));
        }
        throw new ToolError(error.message);
      }
    },
    async list_background(_input: Record<string, never>, { sessionId, caller }) {
      const page = await host.list({ sessionId, status: ['queued', 'inline', 'backgrounded'], limit: 100 });
      const reached = (record: CallRecord) =>
        !caller || !host.access?.scopeRefusal(caller, host.tools?.get(record.toolName));
      return { calls: page.calls.filter((record) => record.detached && reached(record)).map(statusOf) };
    },
  };
}

/** How each tool is declared to a model. */
const DECLARATIONS: Record<
  BackgroundControlTool,
  { title: string; description: string; input: JsonSchema; timeoutMs?: number }
> = {
  check_background: {
    title: 'Check Background',
    description:
      'Report the status of a background call or run of this session: its state, progress and latest output, and its result once it has ended.',
    input: ONE_CALL,
  },
  wait_background: {
    title: 'Wait Background',
    description: `Wait for a background call or run of this session to end, at most timeout_ms (default ${DEFAULT_WAIT_MS}), and return its result, or that it is still running.`,
    input: {
      type: 'object',
      properties: {
        call_id: CALL_ID,
        timeout_ms: {
          type: 'integer',
          description: `How long to wait, in milliseconds (at most ${MAX_WAIT_MS})`,
          minimum: 0,
          maximum: MAX_WAIT_MS,
        },
      },
      required: ['call_id'],
      additionalProperties: false,
    },
    // Its own bound: a runtime-wide `timeoutMs` shorter than the wait must not cut it.
    timeoutMs: MAX_WAIT_MS + 60_000,
  },
  cancel_background: {
    title: 'Cancel Background',
    description: 'Cancel a background call or run of this session that has not ended yet.',
    input: ONE_CALL,
  },
  steer_background: {
    title: 'Steer Background',
    description:
      'Send a new instruction to a background call or run of this session that is still running, instead of cancelling it and starting again. Only tools that take messages can be steered; the tool reads the message while it runs.',
    input: {
      type: 'object',
      properties: {
        call_id: CALL_ID,
        message: { type: 'string', description: 'The instruction, in words', minLength: 1 },
      },
      required: ['call_id', 'message'],
      additionalProperties: false,
    },
  },
  list_background: {
    title: 'List Background',
    description: 'List the background calls and runs of this session that have not ended yet.',
    input: { type: 'object', properties: {}, additionalProperties: false },
  },
};

/**
 * The background-control tools over a runtime. As runtime tools (`builtins`) they run as calls of
 * the caller's session; a host that is not a runtime call (the MCP endpoint) runs them directly
 * with `run`, so that no worker is needed to follow a call.
 */
export interface BackgroundControl {
  /** The tools, in `BACKGROUND_CONTROL`'s order. */
  readonly tools: readonly AnyTool[];
  /**
   * Runs one for a caller: its arguments are checked by its schema first. A refusal (bad
   * arguments, a call of another session) throws a `ToolError` whose message is for the model.
   */
  run(name: BackgroundControlTool, args: unknown, caller: BackgroundCaller): Promise<unknown>;
}

export function backgroundControl(host: BackgroundControlHost): BackgroundControl {
  const operations = operationsOf(host);
  const tools = BACKGROUND_CONTROL.map((name) => {
    const { title, description, input, timeoutMs } = DECLARATIONS[name];
    const operation = operations[name] as (input: unknown, caller: BackgroundCaller) => Promise<unknown>;
    return defineTool({
      name,
      title,
      description,
      input,
      execution: { mode: 'inline', ...(timeoutMs !== undefined ? { timeoutMs } : {}) },
      execute: (args, ctx) => operation(args, ctx),
    }) as AnyTool;
  });
  return {
    tools,
    async run(name, args, caller) {
      const tool = tools[BACKGROUND_CONTROL.indexOf(name)] as AnyTool;
      const checked = await tool.validateInput(args ?? {});
      if (!checked.ok) throw new ToolError(invalidArgumentsMessage(name, checked.issues));
      return (operations[name] as (input: unknown, caller: BackgroundCaller) => Promise<unknown>)(
        checked.value,
        caller,
      );
    },
  };
}

/** Registers the background-control tools that `builtins` names. */
export function registerBackgroundControl(
  tools: ToolRegistry,
  builtins: readonly string[],
  host: BackgroundControlHost,
): void {
  for (const tool of backgroundControl(host).tools) if (builtins.includes(tool.name)) tools.register(tool);
}
