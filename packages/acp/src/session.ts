import type { AgentContext, ToolKind } from '@agentclientprotocol/sdk';
import type { AgentContext as AgentContextV2 } from '@agentclientprotocol/sdk/experimental/v2';
import {
  type CallReply,
  type Notification,
  type NotificationOutcome,
  notificationText,
  replyText,
  type Scheduling,
} from '@baton/contracts';
import type { Runtime } from '@baton/runtime';
import {
  bridgeCall,
  callAwaitingApproval,
  pullDelivery,
  pushDelivery,
  replyOf,
  runDecided,
} from '@baton/runtime/bridge';
import { announced, notified, replied, type ToolCallReport } from './reports.js';
import { reportRunning, type Unsubscribable } from './running-reports.js';
import { v1Wire, v2Wire } from './wire.js';

/**
 * When the end of a call that went to the background reaches the client and the agent:
 * - `next_turn`: at the start of the session's next prompt turn (`startTurn`), inside it. ACP v1
 *   reports work only within a turn (`session/prompt` until its response), so this is v1's.
 * - `when_idle`: as soon as it is due, by its scheduling: `when_idle` ones once no turn runs,
 *   `interrupt` and `silent` ones at once. For a client that takes `session/update` between turns,
 *   as ACP v2's prompt lifecycle has it (work reported after the turn, while the session is idle).
 */
export type ResultsWhen = 'next_turn' | 'when_idle';

/** The end (or an update) of a call that went to the background, as the agent gives it to its model. */
export interface AcpResult {
  /** The ACP tool call it ends (or updates). */
  toolCallId: string;
  callId: string;
  toolName: string;
  outcome: NotificationOutcome;
  /** What the model reads of it. */
  text: string;
  output: unknown;
  scheduling: Scheduling;
}

/**
 * The client's side of the connection, as the SDK gives it to the agent's handlers
 * (`context.client`): of ACP v1 (the SDK's default entry point), or of ACP v2 (`protocol: 2`, the
 * SDK's `experimental/v2` entry point).
 */
export type AcpClient =
  | { protocol?: 1; client: Pick<AgentContext, 'notify' | 'request'> }
  | { protocol: 2; client: Pick<AgentContextV2, 'notify' | 'request'> };

export type BatonAcpSessionOptions = AcpClient & BatonAcpSessionSettings;

export interface BatonAcpSessionSettings {
  /** The ACP session. Its calls are those of the Baton session of the same id unless `batonSessionId`. */
  sessionId: string;
  batonSessionId?: string;
  /** Default `next_turn` with ACP v1, `when_idle` with v2. */
  results?: ResultsWhen;
  /**
   * `when_idle`: the results, once the client was told: put them into the model's conversation
   * (and start a turn of the agent's own, if it will: `startsTurn`). They are acknowledged once it
   * resolves; if it throws, they come again with the next send.
   */
  onResults?: (results: readonly AcpResult[], scheduling: Scheduling) => void | Promise<void>;
  /** The title a tool call shows. Default: the tool's title, else its name. */
  title?: (call: { name: string; args: unknown }) => string;
  /** The kind a tool call shows (its icon). Default `other`. */
  kind?: (name: string) => ToolKind;
  /** A report that could not be sent, or a read of the store that failed. */
  onError?: (error: unknown) => void;
}

/** A tool call of the agent's model. */
export interface AcpToolCall {
  /** The ACP tool call's id, unique in the session (the model's own id of the call, usually). */
  toolCallId: string;
  name: string;
  /** Parsed, or as the model's JSON text. */
  args: unknown;
}

/** What the model is told of its call: the result, an error, or the acknowledgement that it goes on. */
export interface AcpToolReply {
  text: string;
  isError: boolean;
  reply: CallReply;
}

export interface BatonAcpSession {
  readonly sessionId: string;
  /**
   * A prompt turn starts. With `next_turn`, the ends of the session's calls that went to the
   * background are reported to the client (each tool call completed or failed) and returned, to
   * be given to the model in this turn; `endTurn` acknowledges them. With `when_idle`, none wait
   * for a turn: it returns nothing.
   */
  startTurn(): Promise<AcpResult[]>;
  /**
   * Runs a tool call as a Baton call, reported to the client: announced (`tool_call`, pending), in
   * progress with its status text, progress, updates and log tail as they come, and its end. One
   * still running past its inline budget stays `in_progress`: the model is told it goes on, and
   * its end comes later, once. A tool that needs approval asks `session/request_permission` first.
   */
  runTool(call: AcpToolCall): Promise<AcpToolReply>;
  /**
   * The turn is over (`session/prompt` answered). The results `startTurn` gave are acknowledged,
   * unless the turn `failed` before the model had them: then they come again. With `when_idle`,
   * the results that waited for the turn to end go now.
   */
  endTurn(options?: { failed?: boolean }): Promise<void>;
  /**
   * `session/cancel`: cancels the turn's calls that are still within their budget (or waiting for
   * permission). One that went to the background goes on: it is the session's, and only its own
   * cancel (`cancel_background`, `runtime.cancel`) stops it.
   */
  cancelTurn(): void;
  /**
   * The client cancels one tool call (ACP v2's `tool_call/cancel`): its Baton call is cancelled,
   * within its turn or in the background. False when it had ended, or there is no such call.
   */
  cancelToolCall(toolCallId: string): Promise<boolean>;
  /** The tool calls of the session that go on in the background: ACP v2's background work. */
  background(): Promise<string[]>;
  /** Stops reporting; results not yet given wait in the store for the session's next connection. */
  close(): void;
}

/**
 * Baton in an ACP agent: the session's tool calls as Baton calls, reported to the client, and the
 * ends of those that went to the background brought back once (see `ResultsWhen`).
 */
export function batonAcpSession(runtime: Runtime, options: BatonAcpSessionOptions): BatonAcpSession {
  const { sessionId, onResults, onError = (error) => console.error(error) } = options;
  const wire = options.protocol === 2 ? v2Wire(options.client, sessionId) : v1Wire(options.client, sessionId);
  const results = options.results ?? (wire.protocol === 2 ? 'when_idle' : 'next_turn');
  const batonSessionId = options.batonSessionId ?? sessionId;
  // ACP tool call ids are unique in a session only; Baton's call ids are the store's.
  const prefix = `${sessionId}/`;
  const callIdOf = (toolCallId: string) => `${prefix}${toolCallId}`;
  const toolCallIdOf = (callId: string) => (callId.startsWith(prefix) ? callId.slice(prefix.length) : callId);
  const titleOf =
    options.title ??
    (({ name }) => runtime.tools.definitions().find((tool) => tool.name === name)?.title ?? name);
  const kindOf = options.kind ?? (() => 'other');

  const send = (update: ToolCallReport) => wire.send(update);
  /** The session's tool calls in the background: those of before this process first, from the store. */
  const inBackground = new Set<string>();
  const seeded = runtime
    .list({ sessionId: batonSessionId, status: 'backgrounded' })
    .then((page) => {
      for (const record of page.calls) inBackground.add(toolCallIdOf(record.callId));
    })
    .catch(onError);
  const background = async () => {
    await seeded;
    return [...inBackground];
  };
  /** Tool calls whose end was reported: a live report that comes late does not undo it. */
  const ended = new Set<string>();
  const following = new Map<string, Unsubscribable>();
  const stopFollowing = (toolCallId: string) => {
    following.get(toolCallId)?.unsubscribe();
    following.delete(toolCallId);
  };
  const reportEnd = async (toolCallId: string, update: ToolCallReport) => {
    ended.add(toolCallId);
    stopFollowing(toolCallId);
    await send(update);
    inBackground.delete(toolCallId);
  };

  let turn: AbortController | undefined;
  /** The turn was cancelled (`session/cancel`): ACP v2's idle state says so. */
  let cancelled = false;
  const resultOf = (notification: Notification): AcpResult => ({
    toolCallId: toolCallIdOf(notification.callId),
    callId: notification.callId,
    toolName: notification.toolName,
    outcome: notification.outcome,
    text: notificationText(notification),
    output: notification.output,
    scheduling: notification.scheduling,
  });
  /** Tells the client of each result: a tool call ended (or shows its latest update). */
  const reportResults = async (given: readonly Notification[]): Promise<AcpResult[]> => {
    const mapped = given.map(resultOf);
    for (const [index, result] of mapped.entries()) {
      const notification = given[index] as Notification;
      const output = result.outcome === 'succeeded' ? (await runtime.get(result.callId))?.output : undefined;
      const update = notified(result.toolCallId, notification, output);
      if (result.outcome === 'running') await send(update);
      else await reportEnd(result.toolCallId, update);
    }
    return mapped;
  };

  const pull = pullDelivery(runtime, { sessionId: batonSessionId });
  const push =
    results === 'when_idle'
      ? pushDelivery(runtime, {
          sessionId: batonSessionId,
          target: {
            isIdle: () => turn === undefined,
            async put(given, scheduling) {
              const mapped = await reportResults(given);
              await onResults?.(mapped, scheduling);
              // ACP v2: the background work changed while the session is idle.
              if (turn === undefined) await wire.state('idle', await background());
            },
          },
          onError,
        })
      : undefined;

  const run = async ({ toolCallId, name, args }: AcpToolCall, signal: AbortSignal): Promise<CallReply> => {
    const callId = callIdOf(toolCallId);
    const call = { name, args, sessionId: batonSessionId, callId };
    const definition = runtime.tools.definitions().find((tool) => tool.name === name);
    if (definition?.execution.needsApproval === undefined) return bridgeCall(runtime, { ...call, signal });
    if (!(await callAwaitingApproval(runtime, call))) return replyOf(runtime, call, signal);
    const decision = await wire.ask({ toolCallId, title: titleOf({ name, args }), args }, signal);
    return runDecided(runtime, call, decision, signal);
  };

  return {
    sessionId,
    async startTurn() {
      turn = new AbortController();
      cancelled = false;
      await wire.state('running', await background());
      if (results === 'when_idle') return [];
      const taken = await pull.take({ idle: true });
      try {
        return await reportResults(taken);
      } catch (error) {
        await pull.release();
        throw error;
      }
    },
    async runTool(toolCall) {
      const { toolCallId, name, args } = toolCall;
      const callId = callIdOf(toolCallId);
      ended.delete(toolCallId);
      await send(announced({ toolCallId, name, args, title: titleOf({ name, args }), kind: kindOf(name) }));
      following.set(
        toolCallId,
        reportRunning(runtime, {
          callId,
          toolCallId,
          report: (update) => {
            if (!ended.has(toolCallId)) send(update).catch(onError);
          },
          onError,
        }),
      );
      const reply = await run(toolCall, (turn ?? new AbortController()).signal);
      if (reply.status === 'backgrounded') {
        inBackground.add(toolCallId);
        await send(replied(toolCallId, reply.callId, reply));
      } else await reportEnd(toolCallId, replied(toolCallId, reply.callId, reply));
      return { ...replyText(reply), reply };
    },
    async endTurn({ failed = false } = {}) {
      turn = undefined;
      // ACP v1 reports nothing between turns: the ends come at the next one.
      if (results === 'next_turn') for (const toolCallId of [...following.keys()]) stopFollowing(toolCallId);
      if (failed) await pull.release();
      else await pull.confirm();
      await wire.state('idle', await background(), cancelled ? 'cancelled' : 'end_turn');
      await push?.idle();
    },
    cancelTurn() {
      cancelled = turn !== undefined;
      turn?.abort(new Error('the prompt turn was cancelled'));
    },
    cancelToolCall: (toolCallId) =>
      runtime.cancel(callIdOf(toolCallId), 'the client cancelled the tool call'),
    background,
    close() {
      for (const toolCallId of [...following.keys()]) stopFollowing(toolCallId);
      push?.close();
      pull.release().catch(onError);
    },
  };
}
