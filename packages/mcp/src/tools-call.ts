import {
  type CallError,
  type CallEvent,
  type CallRecord,
  isTerminalStatus,
  taskSupportOf,
} from '@baton/contracts';
import {
  type CallToolRequest,
  type CallToolResult,
  CLIENT_CAPABILITIES_META_KEY,
  MissingRequiredClientCapabilityError,
  ProtocolError,
  ProtocolErrorCode,
  type ServerContext,
} from '@modelcontextprotocol/server';
import { filter, firstValueFrom, type Observable, share } from 'rxjs';
import { abandonment } from './abandoned.js';
import { askApproval } from './approval-asks.js';
import { acknowledgementOf, callControlTool, controlToolOf } from './background-control.js';
import { forwardInputRequests } from './input-requests.js';
import { watchInputs } from './input-rounds.js';
import { preparedInputsOf, prepareRound, withPreparedInputs } from './prepare-inputs.js';
import { callerOf } from './scope.js';
import { CALL_SESSIONS, type InputRound, type Serving, TASK_SESSIONS } from './serving.js';
import { legacyTaskOf, TASKS_EXTENSION, taskOf } from './task-view.js';
import { toolResultOf } from './tool-result.js';

async function recordOf(serving: Serving, callId: string): Promise<CallRecord> {
  const record = await serving.runtime.get(callId);
  if (!record) {
    throw new ProtocolError(
      ProtocolErrorCode.InternalError,
      `call ${serving.scope.outside(callId)} was not kept`,
    );
  }
  return record;
}

/** The input round this request answers, if it carries one: its call must be the session's own. */
async function resumedRound(
  serving: Serving,
  context: ServerContext,
  sessionId: string,
): Promise<InputRound | undefined> {
  const round = context.mcpReq.requestState<InputRound>();
  if (round === undefined) return undefined;
  const record = typeof round.callId === 'string' ? await serving.runtime.get(round.callId) : undefined;
  if (record?.sessionId !== sessionId) {
    throw new ProtocolError(
      ProtocolErrorCode.InvalidParams,
      'Invalid requestState: the call it names is not known',
    );
  }
  return round;
}

/**
 * A plain call (no task) that waits for its approval, from a client that takes elicitation: the
 * person is asked on this request, and the request is answered as the decided call answers within
 * its budget (its result, its rejection, or that it goes on). Undefined when nobody was asked.
 */
async function decidedHere(
  serving: Serving,
  callId: string,
  context: ServerContext,
  signal: AbortSignal,
  clientElicits: boolean,
): Promise<CallToolResult | undefined> {
  if (!clientElicits || serving.era !== 'legacy') return undefined;
  const record = await recordOf(serving, callId);
  if (record.approval !== 'pending') return undefined;
  await askApproval(serving, record, context, {});
  if ((await recordOf(serving, callId)).approval === 'pending') return undefined;
  // The wait gives the end here: the call's notification is acknowledged, not told again.
  const decided = await serving.runtime.wait(callId, { signal });
  if (decided === undefined) return undefined;
  return decided.status === 'backgrounded' ? acknowledgementOf(serving, decided) : toolResultOf(decided);
}

/** Whether the client declared the tasks extension on this request (2026-07-28). */
export function takesTasks(context: ServerContext): boolean {
  const envelope = context.mcpReq.envelope as Record<string, unknown> | undefined;
  const capabilities = envelope?.[CLIENT_CAPABILITIES_META_KEY] as
    | { extensions?: Record<string, unknown> }
    | undefined;
  return capabilities?.extensions?.[TASKS_EXTENSION] !== undefined;
}

/** Forwards a call's progress to a progress token, until the subscription it returns ends. */
function forwardProgress(
  serving: Serving,
  callId: string,
  progressToken: string | number,
  send: (params: Record<string, unknown>) => Promise<void>,
  fresh: boolean,
) {
  return serving.runtime
    .follow({ callId }, { fresh })
    .pipe(filter((event) => event.type === 'progress'))
    .subscribe((event) => {
      const { current, total, label } = event.progress;
      send({
        progressToken,
        progress: current,
        ...(total !== undefined ? { total } : {}),
        ...(label !== undefined ? { message: label } : {}),
      }).catch(() => {
        // The client went away; the call goes on, and its record keeps the progress.
      });
    });
}

/**
 * Forwards what the tool logs (`ctx.log`) as `notifications/message`, at the level the client set
 * with `logging/setLevel` (2025-11-25; the 2026-07-28 revision deprecates it).
 */
function forwardLogs(events$: Observable<CallEvent>, context: ServerContext) {
  return events$.pipe(filter((event) => event.type === 'log')).subscribe((event) => {
    context.mcpReq
      .log(event.stream === 'stderr' ? 'warning' : 'info', event.chunk, event.toolName)
      .catch(() => {
        // The client went away; the record keeps the log's tail.
      });
  });
}

/**
 * `tools/call`, where promotion happens. The call runs inline; when it passes its inline budget
 * the same execution goes on in the background and the request is answered at once:
 * - with a task, when the client takes tasks (2026-07-28: declared the extension; 2025-11-25:
 *   asked for one with `task`), so it can follow the call to its result;
 * - otherwise with the runtime's acknowledgement as the tool's result: the result reaches the
 *   conversation later, as a notification.
 * A tool's contract decides whether it may run as a task: `inline` tools never, `background`
 * tools always.
 */
export async function callTool(
  serving: Serving,
  request: CallToolRequest,
  context: ServerContext,
  /** 2025-11-25: the client declared elicitation at `initialize`: a call's approval is asked of it. */
  clientElicits = false,
) {
  const { runtime, scope } = serving;
  const { name, arguments: args = {} } = request.params;
  const control = controlToolOf(serving, name);
  if (control) return callControlTool(serving, control, args, context);
  const tool = runtime.tools.get(name);
  if (!tool) throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Unknown tool: ${name}`);
  // A call in a batch, which the handler did not refuse 403 before it came here: the runtime's
  // decision, asked before a task is made for it.
  const refused = runtime.access.scopeRefusal(callerOf(scope), tool);
  if (refused) throw accessError(refused);
  const caller = scope.caller === undefined ? {} : { caller: scope.caller };
  const support = taskSupportOf(tool, { defaultMode: serving.defaultMode });
  const legacy = serving.era === 'legacy';
  const taskAsked = legacy && (request.params as { task?: unknown }).task !== undefined;
  const tasks = legacy ? taskAsked : takesTasks(context);

  if (legacy && taskAsked && support === 'forbidden') {
    throw new ProtocolError(
      ProtocolErrorCode.MethodNotFound,
      `Tool ${name} does not support task-augmented calls`,
    );
  }
  if (support === 'required' && !tasks) {
    if (legacy) {
      throw new ProtocolError(
        ProtocolErrorCode.MethodNotFound,
        `Tool ${name} only runs as a task: call it with "task"`,
      );
    }
    throw new MissingRequiredClientCapabilityError(
      { requiredCapabilities: { extensions: { [TASKS_EXTENSION]: {} } } },
      `Tool ${name} only runs as a task: declare the ${TASKS_EXTENSION} extension`,
    );
  }

  const sessionId = scope.inside((taskAsked ? TASK_SESSIONS : CALL_SESSIONS) + serving.sessionName);
  // 2026-07-28: a round that answers input names its call in its sealed state.
  const resumed = legacy ? undefined : await resumedRound(serving, context, sessionId);
  const callId = resumed?.callId ?? scope.newCallId();
  // A call made now: its followers have nothing stored to read first.
  const fresh = resumed === undefined;
  const progressToken = request.params._meta?.progressToken;

  if (taskAsked) {
    // 2025-11-25: the client asked for a task. It exists once its first event is stored, so
    // `tasks/get` finds it as soon as the client has its id; its progress goes to the session.
    const stored = firstValueFrom(runtime.follow({ callId }, { fresh }));
    if (progressToken !== undefined) {
      serving.hold(
        forwardProgress(
          serving,
          callId,
          progressToken,
          (params) => serving.notify('notifications/progress', params),
          fresh,
        ),
      );
    }
    // What the tool's `prepare` asks for is asked first: the task begins once it has it.
    const reply = withPreparedInputs(context, (inputs) =>
      runtime.call({ name, args, sessionId, callId, inputs, ...caller }, { freshId: fresh }),
    );
    const first = await Promise.race([stored.then(() => undefined), reply]);
    // Refused by the caller's quota: nothing was kept, so there is no task.
    if (first?.error && isAccessRefusal(first.error)) throw accessError(first.error);
    return { task: legacyTaskOf(await recordOf(serving, callId), serving, true) };
  }

  const progress =
    progressToken === undefined
      ? undefined
      : forwardProgress(
          serving,
          callId,
          progressToken,
          (params) => context.mcpReq.notify({ method: 'notifications/progress', params }),
          fresh,
        );
  // 2025-11-25: what the tool logs, and what it asks for, forwarded on the session; one follower.
  const events$ = legacy ? runtime.follow({ callId }, { fresh }).pipe(share()) : undefined;
  const logs = events$ && forwardLogs(events$, context);
  // What the tool asks for: asked of the client on its session (2025-11-25), or in input rounds.
  const inputs = events$ && forwardInputRequests(serving, callId, context, { events$ });
  const rounds = legacy ? undefined : watchInputs(serving, callId, context, resumed);
  // The request's end cancels the call only while this request is its caller: not once an input
  // round has been answered, as the call then waits for the round that answers it. On 2025-11-25
  // the request waits for the call's reply, so its own signal is the call's.
  const cancelling = legacy ? undefined : new AbortController();
  const cancel = () => cancelling?.abort(context.mcpReq.signal.reason);
  if (cancelling) {
    if (context.mcpReq.signal.aborted) cancel();
    else context.mcpReq.signal.addEventListener('abort', cancel, { once: true });
  }
  const signal = cancelling?.signal ?? context.mcpReq.signal;
  try {
    // `notifications/cancelled` for this request cancels the call until it is answered; a host
    // that gave up waiting (its timeout) or went away leaves it to the background (`abandonment`).
    // A call handed over to the background goes on. A round that answers
    // input goes on with the call it names, within its inline budget.
    const call = (inputs: Record<string, unknown>) =>
      runtime.call(
        { name, args, sessionId, callId, inputs, ...caller },
        { signal, freshId: fresh, onAbort: abandonment },
      );
    // What the tool's `prepare` asks for: answered from this round's input responses (2026-07-28),
    // or asked of the client on its session (2025-11-25).
    const replying = resumed
      ? runtime.wait(callId, { signal }).then((reply) => reply ?? call({}))
      : legacy
        ? withPreparedInputs(context, call)
        : call(context.mcpReq.inputResponses ?? {});
    const first = await Promise.race([
      replying.then((reply) => ({ reply })),
      ...(rounds ? [rounds.asked.then(() => ({ reply: undefined }))] : []),
    ]);
    if (!first.reply) return (await rounds?.result()) as unknown as CallToolResult;
    const reply = first.reply;
    if (reply.error && isAccessRefusal(reply.error)) throw accessError(reply.error);
    const asked = preparedInputsOf(reply);
    if (asked) return prepareRound(context, asked) as unknown as CallToolResult;
    // The reply is the record's end: no second read of the store.
    if (reply.status !== 'backgrounded') return toolResultOf(reply);
    if (!tasks)
      return (
        (await decidedHere(serving, callId, context, signal, clientElicits)) ??
        acknowledgementOf(serving, reply)
      );
    const record = await recordOf(serving, callId);
    // A call that ended meanwhile is answered inline, but one that runs only as a task is a task.
    if (isTerminalStatus(record.status) && support !== 'required') return toolResultOf(record);
    return { resultType: 'task', ...taskOf(record, serving, true) };
  } finally {
    context.mcpReq.signal.removeEventListener('abort', cancel);
    progress?.unsubscribe();
    logs?.unsubscribe();
    inputs?.unsubscribe();
    rounds?.close();
  }
}

/** A call the runtime refused for its caller's rights: nothing of it was kept. */
function isAccessRefusal(error: CallError): boolean {
  return error.code === 'insufficient_scope' || error.code === 'quota_exceeded';
}

/**
 * The runtime's refusal of a call for its caller's rights, as a JSON-RPC error: the request is
 * refused, not answered with a tool's failure (no call was made that a model should read about).
 */
function accessError(error: CallError): ProtocolError {
  return error.code === 'quota_exceeded'
    ? new ProtocolError(QUOTA_EXCEEDED, `Too many requests: ${error.message}`, {
        retryAfterSeconds: error.retryAfterSeconds,
      })
    : new ProtocolError(ProtocolErrorCode.InvalidRequest, `The tool needs the scope ${error.scope}`);
}

/** The server's own JSON-RPC code for a refusal of its quota (the HTTP answer is 429 where it can be). */
const QUOTA_EXCEEDED = -32000;
