import type { Message, RunAgentInput, Tool } from '@ag-ui/core';
import {
  type CallReply,
  isBatonError,
  type Notification,
  notificationText,
  replyText,
  toMcpTool,
} from '@baton/contracts';
import type { Runtime } from '@baton/runtime';
import {
  argumentsOf,
  bridgeCall,
  callAwaitingApproval,
  pullDelivery,
  replyOf,
  runDecided,
} from '@baton/runtime/bridge';
import { approvalInterrupt, decisionOf } from './approvals.js';
import {
  type AgUiRunEvent,
  activityOf,
  runError,
  runFinished,
  runStarted,
  textMessage,
  toolCall,
  toolResult,
} from './events.js';

/** A tool call of the model. */
export interface AgUiToolCall {
  id: string;
  name: string;
  /** Parsed, or as the model's JSON text. */
  args: unknown;
}

/** What the model does in one step: says something, calls tools, or both. */
export interface AgUiModelTurn {
  text?: string;
  toolCalls?: AgUiToolCall[];
}

/**
 * One step of the agent's model: given the thread's messages (the results of its tool calls among
 * them) and the tools it may call (the runtime's, then the front end's), what it does.
 */
export type AgUiModel = (step: {
  threadId: string;
  runId: string;
  messages: readonly Message[];
  tools: readonly Tool[];
  signal: AbortSignal;
}) => Promise<AgUiModelTurn>;

export interface BatonAgUiOptions {
  model: AgUiModel;
  /** The Baton session of a thread: its background results come back to its later runs. Default: the thread id. */
  sessionOf?: (input: RunAgentInput) => string;
  /** Model steps in one run at most. Default 10. */
  maxSteps?: number;
  /** The run was stopped (the front end went away): its calls still within their budget are cancelled. */
  signal?: AbortSignal;
}

export const DEFAULT_MAX_STEPS = 10;

/**
 * One AG-UI run of an agent whose model is `model` and whose tools are the runtime's, as the
 * events it sends. In order: the decisions on the approvals this run resumes, each a
 * `TOOL_CALL_RESULT`; the ends of the thread's calls that went to the background, each a
 * `TOOL_CALL_RESULT` for the original tool call (and, before each later step, those due at any
 * step: `interrupt` and `silent` ones, `isDueAt`); then the model's steps, each tool call of a
 * runtime's tool run as a Baton call. A call past its inline budget is answered with the
 * acknowledgement and shown as a `baton_call` activity, `backgrounded`; a call that waits for
 * approval finishes the run with an interrupt; a call of a front-end tool finishes it, for the
 * front end to run. The results a run gave are acknowledged once it finished; a run that failed
 * or was stopped before lets them come again.
 */
export async function* batonAgUiRun(
  runtime: Runtime,
  input: RunAgentInput,
  {
    model,
    sessionOf = ({ threadId }) => threadId,
    maxSteps = DEFAULT_MAX_STEPS,
    signal = new AbortController().signal,
  }: BatonAgUiOptions,
): AsyncGenerator<AgUiRunEvent, void, undefined> {
  const { threadId, runId } = input;
  const sessionId = sessionOf(input);
  // AG-UI tool call ids are the thread's (the model's); Baton's call ids are the store's.
  const prefix = `${threadId}/`;
  const callIdOf = (toolCallId: string) => `${prefix}${toolCallId}`;
  const toolCallIdOf = (callId: string) => (callId.startsWith(prefix) ? callId.slice(prefix.length) : callId);
  const own = runtime.tools.definitions();
  const tools: Tool[] = [
    ...own.map((tool) => {
      const { name, description, inputSchema } = toMcpTool(tool, { defaultMode: runtime.defaultMode });
      return { name, description: description ?? '', parameters: inputSchema };
    }),
    ...input.tools,
  ];
  const messages: Message[] = [...input.messages];
  const pull = pullDelivery(runtime, { sessionId });
  let finished = false;

  /** What the model and the front end are told of a call's reply. */
  function* answered(toolCallId: string, tool: string, reply: CallReply): Generator<AgUiRunEvent> {
    const { text } = replyText(reply);
    const messageId = `result-${toolCallId}`;
    yield toolResult(toolCallId, messageId, text);
    messages.push({ id: messageId, role: 'tool', toolCallId, content: text });
    if (reply.status === 'backgrounded')
      yield activityOf({ callId: reply.callId, toolCallId, tool, status: 'backgrounded' });
  }
  /**
   * A result of the background: the end of the original tool call, or (still running) its latest
   * update or a reminder that it runs, as a `developer` message.
   */
  function* broughtBack(notification: Notification): Generator<AgUiRunEvent> {
    const toolCallId = toolCallIdOf(notification.callId);
    const text = notificationText(notification);
    const activity = { callId: notification.callId, toolCallId, tool: notification.toolName };
    if (notification.outcome === 'running') {
      // The model is told beside the conversation (its call has one result, the end); the front
      // end shows it on the call's activity.
      const messageId = `update-${notification.id}`;
      yield* textMessage(messageId, text, 'developer');
      messages.push({ id: messageId, role: 'developer', content: text });
      yield activityOf({ ...activity, status: 'backgrounded', update: text });
      return;
    }
    const messageId = `result-${notification.id}`;
    yield toolResult(toolCallId, messageId, text);
    messages.push({ id: messageId, role: 'tool', toolCallId, content: text });
    yield activityOf({ ...activity, status: notification.outcome });
  }

  yield runStarted(threadId, runId);
  try {
    for (const entry of input.resume ?? []) {
      const decided = decisionOf(entry);
      if (decided === undefined) continue;
      const record = await runtime.get(decided.callId);
      if (record === undefined) continue;
      const request = { name: record.toolName, args: record.args, sessionId, callId: decided.callId };
      const reply = await runDecided(runtime, request, decided.decision, signal);
      yield* answered(toolCallIdOf(decided.callId), record.toolName, reply);
    }
    for (const notification of await pull.take({ idle: true })) yield* broughtBack(notification);

    for (let step = 0; step < maxSteps; step++) {
      // A result that ended while the run went on: `interrupt` and `silent` ones at the next step.
      if (step > 0)
        for (const notification of await pull.take({ idle: false })) yield* broughtBack(notification);
      const turn = await model({ threadId, runId, messages, tools, signal });
      const calls = turn.toolCalls ?? [];
      const messageId = `${runId}-${step}`;
      if (turn.text !== undefined && turn.text !== '') yield* textMessage(messageId, turn.text);
      for (const call of calls) yield* toolCall(call, messageId);
      messages.push({
        id: messageId,
        role: 'assistant',
        ...(turn.text !== undefined ? { content: turn.text } : {}),
        ...(calls.length > 0
          ? {
              toolCalls: calls.map((call) => ({
                id: call.id,
                type: 'function' as const,
                function: {
                  name: call.name,
                  arguments: typeof call.args === 'string' ? call.args : JSON.stringify(call.args ?? {}),
                },
              })),
            }
          : {}),
      });
      if (calls.length === 0) break;

      const interrupts = [];
      let forTheFrontEnd = false;
      for (const call of calls) {
        const definition = own.find((tool) => tool.name === call.name);
        if (definition === undefined && input.tools.some((tool) => tool.name === call.name)) {
          // The front end's own tool: it runs it, and starts the next run with its result.
          forTheFrontEnd = true;
          continue;
        }
        const request = {
          name: call.name,
          args: argumentsOf(call.args),
          sessionId,
          callId: callIdOf(call.id),
        };
        // A tool neither the runtime's nor the front end's: the runtime's own refusal, "not
        // found" with the tools there are, is the call's result, as in every other host.
        if (definition?.execution.needsApproval !== undefined) {
          if (await callAwaitingApproval(runtime, request)) {
            interrupts.push(
              approvalInterrupt({ callId: request.callId, toolCallId: call.id, tool: call.name }),
            );
            continue;
          }
          yield* answered(call.id, call.name, await replyOf(runtime, request, signal));
          continue;
        }
        yield* answered(call.id, call.name, await bridgeCall(runtime, { ...request, signal }));
      }
      if (interrupts.length > 0) {
        yield runFinished(threadId, runId, interrupts);
        finished = true;
        return;
      }
      if (forTheFrontEnd) break;
    }
    yield runFinished(threadId, runId);
    finished = true;
  } catch (error) {
    yield runError(
      error instanceof Error ? error.message : String(error),
      isBatonError(error) ? error.code : undefined,
    );
  } finally {
    // The front end has what a finished run sent; a run that failed or was stopped gives it again.
    if (finished) await pull.confirm();
    else await pull.release();
  }
}
