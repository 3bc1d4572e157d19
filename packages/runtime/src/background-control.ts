import {
  type AnyTool,
  type CallRecord,
  defineTool,
  isTerminalStatus,
  ToolError,
  type ToolRegistry,
} from '@baton/contracts';
import { BACKGROUND_MESSAGES } from './messages.js';
import type { Runtime } from './options.js';

/** The tools a model follows its background calls with; each sees only its own session's calls. */
export const BACKGROUND_CONTROL = [
  'check_background',
  'wait_background',
  'cancel_background',
  'list_background',
] as const;
export type BackgroundControlTool = (typeof BACKGROUND_CONTROL)[number];

/** Every tool the runtime itself offers, when `builtins` names it. */
export const BUILTIN_TOOLS = ['spawn_background', ...BACKGROUND_CONTROL] as const;

/** `wait_background` waits this long unless told otherwise, and never longer than the maximum. */
export const DEFAULT_WAIT_MS = 30_000;
export const MAX_WAIT_MS = 300_000;

export type BackgroundControlHost = Pick<Runtime, 'get' | 'list' | 'cancel' | 'wait'>;

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
  if (record.waitingFor !== undefined) status.waiting_for = record.waitingFor;
  if (record.progress) status.progress = record.progress;
  if (record.statusText) status.status_text = record.statusText;
  if (record.outputTail) status.output_tail = record.outputTail;
  if (record.status === 'succeeded') status.result = record.output;
  else if (record.error) status.error = record.error.message;
  return status;
}

/** The call, when it is the caller's session's; the same refusal whether it is another's or none. */
async function ownCall(host: BackgroundControlHost, callId: string, sessionId: string): Promise<CallRecord> {
  const record = await host.get(callId);
  if (!record || record.sessionId !== sessionId) throw new ToolError(BACKGROUND_MESSAGES.unknownCall(callId));
  return record;
}

function checkBackground(host: BackgroundControlHost): AnyTool {
  return defineTool({
    name: 'check_background',
    title: 'Check Background',
    description:
      'Report the status of a background call or run of this session: its state, progress and latest output, and its result once it has ended.',
    input: ONE_CALL,
    execution: { mode: 'inline' },
    async execute(input, ctx) {
      const { call_id } = input as { call_id: string };
      return statusOf(await ownCall(host, call_id, ctx.sessionId));
    },
  });
}

function waitBackground(host: BackgroundControlHost): AnyTool {
  return defineTool({
    name: 'wait_background',
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
    execution: { mode: 'inline', timeoutMs: MAX_WAIT_MS + 60_000 },
    async execute(input, ctx) {
      const { call_id, timeout_ms = DEFAULT_WAIT_MS } = input as { call_id: string; timeout_ms?: number };
      await ownCall(host, call_id, ctx.sessionId);
      await host.wait(call_id, { timeoutMs: timeout_ms, signal: ctx.signal });
      const now = await ownCall(host, call_id, ctx.sessionId);
      return isTerminalStatus(now.status)
        ? statusOf(now)
        : { ...statusOf(now), message: BACKGROUND_MESSAGES.stillRunning(timeout_ms) };
    },
  });
}

function cancelBackground(host: BackgroundControlHost): AnyTool {
  return defineTool({
    name: 'cancel_background',
    title: 'Cancel Background',
    description: 'Cancel a background call or run of this session that has not ended yet.',
    input: ONE_CALL,
    execution: { mode: 'inline' },
    async execute(input, ctx) {
      const { call_id } = input as { call_id: string };
      const record = await ownCall(host, call_id, ctx.sessionId);
      const cancelled =
        !isTerminalStatus(record.status) && (await host.cancel(call_id, BACKGROUND_MESSAGES.cancelReason));
      if (!cancelled) {
        const { status } = await ownCall(host, call_id, ctx.sessionId);
        throw new ToolError(BACKGROUND_MESSAGES.alreadyEnded(call_id, status));
      }
      return { call_id, status: 'cancelled' };
    },
  });
}

function listBackground(host: BackgroundControlHost): AnyTool {
  return defineTool({
    name: 'list_background',
    title: 'List Background',
    description: 'List the background calls and runs of this session that have not ended yet.',
    input: { type: 'object', properties: {}, additionalProperties: false },
    execution: { mode: 'inline' },
    async execute(_input, ctx) {
      const page = await host.list({
        sessionId: ctx.sessionId,
        status: ['queued', 'inline', 'backgrounded'],
        limit: 100,
      });
      return { calls: page.calls.filter((record) => record.detached).map(statusOf) };
    },
  });
}

const MAKERS: Record<BackgroundControlTool, (host: BackgroundControlHost) => AnyTool> = {
  check_background: checkBackground,
  wait_background: waitBackground,
  cancel_background: cancelBackground,
  list_background: listBackground,
};

/** Registers the background-control tools that `builtins` names. */
export function registerBackgroundControl(
  tools: ToolRegistry,
  builtins: readonly string[],
  host: BackgroundControlHost,
): void {
  for (const name of BACKGROUND_CONTROL) if (builtins.includes(name)) tools.register(MAKERS[name](host));
}
