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
  type BackgroundControlHost,
  type BackgroundControlTool,
  backgroundControl,
  type Runtime,
} from '@baton/runtime';
import type { CallToolResult } from '@modelcontextprotocol/server';
import type { McpScope } from './scope.js';
import { CALL_SESSIONS, type Serving } from './serving.js';
import { toolResultOf } from './tool-result.js';

/**
 * A client that takes no tasks follows a call that went to the background with these tools: the
 * endpoint serves them itself (no worker runs them), over the calls of the caller's session.
 */
type ControlServing = Pick<
  Serving,
  'runtime' | 'scope' | 'defaultMode' | 'backgroundControl' | 'sessionName'
>;

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

/** The runtime's tools as this endpoint lists them: the control tools, when served, are the endpoint's own. */
export function listedTools(serving: ControlServing): AnyTool[] {
  const tools = serving.runtime.tools.definitions();
  if (!servesControl(serving)) return tools;
  declared ??= backgroundControl(serving.runtime).tools;
  return [...tools.filter((tool) => !isControlTool(tool.name)), ...declared];
}

/** The control tool a `tools/call` names, when the endpoint serves it. */
export function controlToolOf(serving: ControlServing, name: string): BackgroundControlTool | undefined {
  return isControlTool(name) && servesControl(serving) ? name : undefined;
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
    cancel: (callId, reason) => runtime.cancel(scope.inside(callId), reason),
    wait: (callId, options) => runtime.wait(scope.inside(callId), options),
  };
}

/** The Baton session of the plain calls made over this connection. */
export function callSessionOf(serving: Pick<Serving, 'scope' | 'sessionName'>): string {
  return serving.scope.inside(CALL_SESSIONS + serving.sessionName);
}

/** Runs a control tool for this connection's session; a refusal is a result the model reads. */
export async function callControlTool(
  serving: ControlServing,
  name: BackgroundControlTool,
  args: unknown,
  signal: AbortSignal,
): Promise<CallToolResult> {
  const control = backgroundControl(scopedHost(serving.runtime, serving.scope));
  try {
    const output = await control.run(name, args, { sessionId: callSessionOf(serving), signal });
    return toolResultOf({ status: 'succeeded', output });
  } catch (error) {
    if (!isToolError(error)) throw error;
    return { isError: true, content: [{ type: 'text', text: error.message }] };
  }
}

/** What a model that cannot be notified is told to do to get a call's result. */
export function followInstruction(callId: string): string {
  return `To get its result, call wait_background with call_id ${JSON.stringify(callId)}; check_background reports how far it got, and cancel_background stops it.`;
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
  if (typeof output === 'object' && output !== null && !Array.isArray(output)) {
    const fields = output as Record<string, unknown>;
    const message = typeof fields.message === 'string' ? fields.message : '';
    const acknowledgement = { ...fields, call_id: callId, message: followingWords(message, callId).trim() };
    // Text only: a tool's output schema describes its result, not this acknowledgement.
    return { content: [{ type: 'text', text: JSON.stringify(acknowledgement) }] };
  }
  return { content: [{ type: 'text', text: followingWords(asText(output), callId) }] };
}
