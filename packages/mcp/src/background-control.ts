import {
  type AnyTool,
  type CallRecord,
  type CallReply,
  isToolError,
  LATER_NOTIFICATION,
  taskSupportOf,
} from '@baton/contracts';
import {
  BACKGROUND_CONTROL,
  type BackgroundCaller,
  type BackgroundControlHost,
  type BackgroundControlTool,
  backgroundControl,
  MAX_WAIT_MS,
  type Runtime,
} from '@baton/runtime';
import type { CallToolResult, ServerContext } from '@modelcontextprotocol/server';
import { CALL_APP_URI, CALL_META_KEY } from './call-app.js';
import { callerOf, type McpScope } from './scope.js';
import { CALL_SESSIONS, type Serving } from './serving.js';
import { toolResultOf } from './tool-result.js';

/**
 * A client that takes no tasks follows a call that went to the background with these tools: the
 * endpoint serves them itself (no worker runs them), over the calls of the caller's session.
 */
type ControlServing = Pick<
  Serving,
  'runtime' | 'scope' | 'defaultMode' | 'backgroundControl' | 'sessionName' | 'era'
>;

/**
 * The longest a wait lasts for a request without a progress token: clients time a request out at
 * 60 s by default (the SDKs, OpenAI Agents), and without progress nothing tells them it lives.
 */
export const SILENT_WAIT_MS = 45_000;

/** A stateless (2026-07-28) client has no session: nothing to list, so it keeps each call's id. */
const SESSION_ONLY: readonly BackgroundControlTool[] = ['list_background'];

function isControlTool(name: string): name is BackgroundControlTool {
  return (BACKGROUND_CONTROL as readonly string[]).includes(name);
}

/** Whether a client may be answered that a call goes on in the background: a tool of the runtime may. */
function anyMayBackground(serving: ControlServing): boolean {
  for (const tool of serving.runtime.tools) {
    if (isControlTool(tool.name)) continue;
    if (taskSupportOf(tool, { defaultMode: serving.defaultMode }) !== 'forbidden') return true;
  }
  return false;
}

/** Whether this endpoint serves the background-control tools: on unless turned off, when a tool may go to the background. */
export function servesControl(serving: ControlServing): boolean {
  return serving.backgroundControl && anyMayBackground(serving);
}

/** Declarations only: the tools listed to clients (their `execute` is never called). */
let declared: readonly AnyTool[] | undefined;

/**
 * The control tools this connection is served: a stateless one lists nothing, having no session;
 * `steer_background` only beside a tool that takes messages.
 */
function servedControl(serving: ControlServing): readonly AnyTool[] {
  declared ??= backgroundControl(serving.runtime).tools;
  const steerable = [...serving.runtime.tools].some((tool) => tool.validateMessage !== undefined);
  return declared.filter(
    (tool) =>
      !(serving.era === 'modern' && SESSION_ONLY.includes(tool.name as never)) &&
      (steerable || tool.name !== 'steer_background'),
  );
}

/** The runtime's tools as this endpoint lists them: the control tools, when served, are the endpoint's own. */
export function listedTools(serving: ControlServing): AnyTool[] {
  // A tool the caller lacks the scope of is not listed: the runtime's decision.
  const tools = serving.runtime.access.visible(callerOf(serving.scope), serving.runtime.tools.definitions());
  if (!servesControl(serving)) return tools;
  return [...tools.filter((tool) => !isControlTool(tool.name)), ...servedControl(serving)];
}

/** The control tool a `tools/call` names, when the endpoint serves it. */
export function controlToolOf(serving: ControlServing, name: string): BackgroundControlTool | undefined {
  if (!isControlTool(name) || !servesControl(serving)) return undefined;
  return servedControl(serving).some((tool) => tool.name === name) || SESSION_ONLY.includes(name)
    ? name
    : undefined;
}

/** The runtime seen with a tenant's ids: the model gives and sees ids as its tenant does. */
function scopedHost(runtime: Runtime, scope: McpScope): BackgroundControlHost {
  const shown = (record: CallRecord): CallRecord => ({ ...record, callId: scope.outside(record.callId) });
  return {
    get: async (callId) => {
      const record = await runtime.get(scope.inside(callId));
      return record && shown(record);
    },
    list: async (filter) => {
      const page = await runtime.list(filter);
      return { ...page, calls: page.calls.map(shown) };
    },
    cancel: (callId, reason, as) => runtime.cancel(scope.inside(callId), reason, as),
    wait: (callId, options) => runtime.wait(scope.inside(callId), options),
    steer: async (callId, message, as) => ({
      ...(await runtime.steer(scope.inside(callId), message, as)),
      callId,
    }),
    access: runtime.access,
    tools: runtime.tools,
  };
}

/** The Baton session of the plain calls made over this connection. */
export function callSessionOf(serving: Pick<Serving, 'scope' | 'sessionName'>): string {
  return serving.scope.inside(CALL_SESSIONS + serving.sessionName);
}

/** What a stateless client that calls `list_background` anyway is told. */
export const NO_SESSION_TO_LIST =
  'list_background lists the calls of a session, and this client has none (it is stateless): use the call_id each acknowledgement gave.';

/**
 * Who runs a control tool over MCP. A call id reaches its call from any session of the tenant (a
 * client that reconnected, another process of the same agent); listing stays the session's. No
 * notification comes over MCP, so a wait that ends first says to wait again, and a wait lasts past
 * `SILENT_WAIT_MS` only for a request that takes progress, which it is sent while it waits.
 */
function controlCallerOf(serving: ControlServing, context: ServerContext): BackgroundCaller {
  const progressToken = context.mcpReq._meta?.progressToken;
  const caller: BackgroundCaller = {
    sessionId: callSessionOf(serving),
    caller: callerOf(serving.scope),
    signal: context.mcpReq.signal,
    byCallId: true,
    notified: false,
    maxWaitMs: progressToken === undefined ? SILENT_WAIT_MS : MAX_WAIT_MS,
  };
  if (progressToken !== undefined) {
    caller.onStillWaiting = (waitedMs) => {
      context.mcpReq
        .notify({
          method: 'notifications/progress',
          params: { progressToken, progress: waitedMs, message: `still running after ${waitedMs} ms` },
        })
        .catch(() => {
          // The client went away: the wait ends with the request.
        });
    };
  }
  return caller;
}

/** Runs a control tool for this connection; a refusal is a result the model reads. */
export async function callControlTool(
  serving: ControlServing,
  name: BackgroundControlTool,
  args: unknown,
  context: ServerContext,
): Promise<CallToolResult> {
  const refused = (text: string): CallToolResult => ({ isError: true, content: [{ type: 'text', text }] });
  if (serving.era === 'modern' && SESSION_ONLY.includes(name)) return refused(NO_SESSION_TO_LIST);
  const control = backgroundControl(scopedHost(serving.runtime, serving.scope));
  try {
    const output = await control.run(name, args, controlCallerOf(serving, context));
    return toolResultOf({ status: 'succeeded', output });
  } catch (error) {
    if (!isToolError(error)) throw error;
    return refused(error.message);
  }
}

/** What a model that cannot be notified is told to do to get a call's result. */
export function followInstruction(callId: string): string {
  return `Nothing brings its result back on its own: call wait_background with call_id ${JSON.stringify(callId)} to get it, before you end your turn if you need it; check_background reports how far it got, and cancel_background stops it. Keep the call_id: it reaches this call from any later session.`;
}

/** The runtime's words with the way the result comes back here in place of the later notification. */
function followingWords(text: string, callId: string): string {
  const instruction = followInstruction(callId);
  return text.includes(LATER_NOTIFICATION)
    ? text.replace(LATER_NOTIFICATION, instruction)
    : `${text} ${instruction}`;
}

function asText(value: unknown): string {
  return typeof value === 'string' ? value : JSON.stringify(value ?? null);
}

/**
 * What a client that cannot take a task is told when the call moves to the background: the
 * runtime's acknowledgement. With the control tools served, it names the tool that brings the
 * result and the `call_id` to give it, in place of the notification this channel cannot deliver.
 */
export function acknowledgementOf(serving: ControlServing, reply: CallReply): CallToolResult {
  if (!servesControl(serving)) return { content: [{ type: 'text', text: asText(reply.output) }] };
  const callId = serving.scope.outside(reply.callId);
  const { output } = reply;
  // The host is pointed to the call's MCP App, which follows the call by this id.
  const _meta = { ui: { resourceUri: CALL_APP_URI }, [CALL_META_KEY]: { callId } };
  if (typeof output === 'object' && output !== null && !Array.isArray(output)) {
    const fields = output as Record<string, unknown>;
    const message = typeof fields.message === 'string' ? fields.message : '';
    const acknowledgement = { ...fields, call_id: callId, message: followingWords(message, callId).trim() };
    // Text only: a tool's output schema describes its result, not this acknowledgement.
    return { content: [{ type: 'text', text: JSON.stringify(acknowledgement) }], _meta };
  }
  return { content: [{ type: 'text', text: followingWords(asText(output), callId) }], _meta };
}
