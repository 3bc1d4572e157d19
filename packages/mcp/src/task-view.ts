import {
  type CallRecord,
  type CallStatus,
  type CallUpdate,
  isTerminalStatus,
  withSecretArgsRedacted,
} from '@baton/contracts';
import type { PendingInput, Runtime } from '@baton/runtime';
import { ProtocolErrorCode } from '@modelcontextprotocol/server';
import type { McpScope } from './scope.js';

/** What a task view needs of its server: whose ids, how often to ask clients to poll, how long tasks are kept. */
export interface TaskViewing {
  scope: McpScope;
  /** Its tools: what an approval's message shows of a call's arguments leaves out their secrets. */
  runtime: Pick<Runtime, 'tools'>;
  pollIntervalMs: number;
  /** How long the runtime keeps an ended call; undefined when it keeps them all. */
  retentionMs: number | undefined;
}

import { mcpRequestOf } from './input-requests.js';
import { toolResultOf } from './tool-result.js';

/** How often a client should poll `tasks/get`, unless the handler is told otherwise. */
export const POLL_INTERVAL_MS = 1_000;

/** The extension that carries tasks on revision 2026-07-28 (SEP-2663). */
export const TASKS_EXTENSION = 'io.modelcontextprotocol/tasks';

type TaskStatus = 'working' | 'input_required' | 'completed' | 'failed' | 'cancelled';

/** 2025-11-25: a call that ended in failure is a `failed` task; its result still says why. */
const LEGACY_STATUS: Record<CallStatus, TaskStatus> = {
  queued: 'working',
  inline: 'working',
  backgrounded: 'working',
  succeeded: 'completed',
  failed: 'failed',
  timed_out: 'failed',
  cancelled: 'cancelled',
};

/**
 * 2026-07-28: `failed` is kept for JSON-RPC errors, here a tool that broke (an internal error); a
 * tool that reported a failure, or timed out, completed with a result that has `isError`.
 */
function statusOf(record: CallRecord, inputs: readonly PendingInput[]): TaskStatus {
  if (record.approval === 'pending') return 'input_required';
  if (inputs.length > 0 && !isTerminalStatus(record.status)) return 'input_required';
  if (record.status === 'failed' && record.error?.code === 'internal_error') return 'failed';
  if (record.status === 'failed' || record.status === 'timed_out') return 'completed';
  return LEGACY_STATUS[record.status];
}

function updateMessageOf({ updateSeq, value }: CallUpdate): string {
  return `update ${updateSeq}: ${typeof value === 'string' ? value : JSON.stringify(value)}`;
}

function statusMessageOf(record: CallRecord, inputs: readonly PendingInput[] = []): string | undefined {
  if (record.approval === 'pending') return 'waiting for approval';
  if (inputs.length > 0 && !isTerminalStatus(record.status)) return 'waiting for input';
  if (record.error) return record.error.message;
  // An intermediate result is for the model: the status message is the one place a task's reader sees it.
  if (record.update && !isTerminalStatus(record.status)) return updateMessageOf(record.update);
  if (record.statusText !== undefined) return record.statusText;
  const progress = record.progress;
  if (!progress) return undefined;
  const total = progress.total === undefined ? '' : `/${progress.total}`;
  return `${progress.current}${total}${progress.unit ? ` ${progress.unit}` : ''}`;
}

function timesOf(record: CallRecord) {
  const { createdAt, startedAt = createdAt, updatedAt = createdAt, endedAt = createdAt } = record;
  return {
    createdAt: new Date(createdAt).toISOString(),
    lastUpdatedAt: new Date(Math.max(startedAt, updatedAt, endedAt)).toISOString(),
  };
}

/**
 * How long from its creation the task is kept at least: the runtime removes a call its retention
 * after it ends, so the retention holds from its creation. One number from the first answer on,
 * as the client was first told. Null when nothing is removed.
 */
function ttlOf(retentionMs: number | undefined): number | null {
  return retentionMs ?? null;
}

/**
 * A task as 2025-11-25 shows it. `seed` gives a task that has just been created: it is `working`.
 * One that waits for its approval, or for what its tool asks (`inputs`), is `input_required`:
 * `tasks/result` asks the client for it.
 */
export function legacyTaskOf(
  record: CallRecord,
  { scope, pollIntervalMs, retentionMs }: TaskViewing,
  seed = false,
  inputs: readonly PendingInput[] = [],
) {
  const statusMessage = statusMessageOf(record, inputs);
  const waits = record.approval === 'pending' || (inputs.length > 0 && !isTerminalStatus(record.status));
  return {
    taskId: scope.outside(record.callId),
    status: seed ? 'working' : waits ? 'input_required' : LEGACY_STATUS[record.status],
    ttl: ttlOf(retentionMs),
    ...timesOf(record),
    pollInterval: pollIntervalMs,
    ...(statusMessage !== undefined ? { statusMessage } : {}),
  } as const;
}

/**
 * A task as 2026-07-28 shows it (`DetailedTask`): a completed task carries its result. A call that
 * waits for approval, or for what its tool asks (`inputs`, by name), is `input_required`, with
 * those requests under `inputRequests`.
 */
export function taskOf(
  record: CallRecord,
  { scope, pollIntervalMs, retentionMs, runtime }: TaskViewing,
  seed = false,
  inputs: readonly PendingInput[] = [],
) {
  const statusMessage = statusMessageOf(record, inputs);
  const status: TaskStatus = seed ? 'working' : statusOf(record, inputs);
  return {
    taskId: scope.outside(record.callId),
    status,
    ...timesOf(record),
    ttlMs: ttlOf(retentionMs),
    pollIntervalMs,
    ...(statusMessage !== undefined ? { statusMessage } : {}),
    // The result as the request itself would have answered it, discriminator included.
    ...(status === 'completed' ? { result: { resultType: 'complete', ...toolResultOf(record) } } : {}),
    ...(status === 'failed'
      ? {
          error: {
            code: ProtocolErrorCode.InternalError,
            message: record.error?.message ?? 'Internal error',
          },
        }
      : {}),
    ...(status === 'input_required'
      ? { inputRequests: inputRequestsOf(withSecretArgsRedacted(runtime.tools, record), inputs) }
      : {}),
  };
}

/** What a task waits for: its approval, and what its tool asks, each under its name. */
function inputRequestsOf(record: CallRecord, inputs: readonly PendingInput[]) {
  return {
    ...(record.approval === 'pending' ? approvalRequestOf(record) : {}),
    ...Object.fromEntries(inputs.map((input) => [input.name, mcpRequestOf(input.request)])),
  };
}

/** A task as 2026-07-28 shows it, with what its call waits for now (see `taskOf`). */
export async function detailedTaskOf(record: CallRecord, serving: TaskViewing & { runtime: Runtime }) {
  return taskOf(record, serving, false, await serving.runtime.inputs.pending(record.callId));
}

/** The key of the approval's elicitation among a task's input requests: one per call. */
export const APPROVAL_INPUT_KEY = 'approval';

/**
 * The background continuation's approval, asked as an elicitation: accept approves, decline rejects
 * with the reason. `record`: with its secret arguments redacted (`withSecretArgsRedacted`).
 */
export function approvalRequestOf(record: Pick<CallRecord, 'toolName' | 'args'>) {
  return {
    [APPROVAL_INPUT_KEY]: {
      method: 'elicitation/create',
      params: {
        mode: 'form',
        message: `Allow the tool call ${record.toolName} with ${JSON.stringify(record.args)}?`,
        requestedSchema: {
          type: 'object',
          properties: { reason: { type: 'string', description: 'Why the call is declined' } },
        },
      },
    },
  };
}
