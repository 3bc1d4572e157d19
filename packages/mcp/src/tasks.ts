import { type CallRecord, isTerminalStatus } from '@baton/contracts';
import {
  MissingRequiredClientCapabilityError,
  ProtocolError,
  ProtocolErrorCode,
  RELATED_TASK_META_KEY,
  type Server,
  type ServerContext,
} from '@modelcontextprotocol/server';
import { z } from 'zod';
import { answerApproval, askApproval, ElicitResult } from './approval-asks.js';
import { callSessionOf } from './background-control.js';
import { ended } from './call-end.js';
import { forwardInputRequests } from './input-requests.js';
import { CALL_SESSIONS, type Serving, TASK_SESSIONS } from './serving.js';
import { APPROVAL_INPUT_KEY, detailedTaskOf, legacyTaskOf, TASKS_EXTENSION } from './task-view.js';
import { toolResultOf } from './tool-result.js';
import { takesTasks } from './tools-call.js';

const TaskParams = z.object({ taskId: z.string() });
const ListParams = z.object({ cursor: z.string().optional() }).optional();
const UpdateParams = z.object({ taskId: z.string() });
/** 2026-07-28 checks the client's capability before the params, so a non-declaring client hears why. */
const AnyParams = z.record(z.string(), z.unknown());

/**
 * The record of a task of this scope (or of a plain call of this connection's session, which a
 * client may follow as a task too), or the spec's `-32602` for an id that names none.
 */
async function taskRecord(serving: Serving, taskId: string): Promise<CallRecord> {
  const record = await serving.runtime.get(serving.scope.inside(taskId));
  const own =
    record?.sessionId.startsWith(serving.scope.inside(TASK_SESSIONS)) ||
    record?.sessionId === callSessionOf(serving);
  if (!record || !own) {
    throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Failed to retrieve task: Task not found`);
  }
  return record;
}

async function reread(serving: Serving, record: CallRecord): Promise<CallRecord> {
  return (await serving.runtime.get(record.callId)) ?? record;
}

/** 2025-11-25: tasks in the core protocol, for the calls made with `task`. */
export function serveLegacyTasks(server: Server, serving: Serving): void {
  const { runtime, scope } = serving;
  const find = (taskId: string) => taskRecord(serving, taskId);

  // A client that follows its task with tasks/get alone, and calls tasks/result only once it
  // ended (the ext-tasks client), is asked for the approval here too, as 2026-07-28 asks in tasks/get.
  server.setRequestHandler('tasks/get', { params: TaskParams }, async ({ taskId }, context) => {
    let record = await find(taskId);
    if (record.approval === 'pending' && server.getClientCapabilities()?.elicitation !== undefined) {
      await askApproval(serving, record, context, { [RELATED_TASK_META_KEY]: { taskId } });
      record = await reread(serving, record);
    }
    return legacyTaskOf(record, serving, false, await runtime.inputs.pending(record.callId));
  });

  // While it waits for the result, what the task waits for (its approval, what its tool asks) is
  // asked of the client on this request, related to the task.
  server.setRequestHandler('tasks/result', { params: TaskParams }, async ({ taskId }, context) => {
    const record = await find(taskId);
    const related = { [RELATED_TASK_META_KEY]: { taskId } };
    const inputs = isTerminalStatus(record.status)
      ? undefined
      : forwardInputRequests(serving, record.callId, context, { meta: related });
    try {
      if (record.approval === 'pending') void askApproval(serving, record, context, related);
      if (!isTerminalStatus(record.status)) await ended(runtime, record.callId, context.mcpReq.signal);
    } finally {
      inputs?.unsubscribe();
    }
    const now = await reread(serving, record);
    // The client has the result: the call's notifications are acknowledged, as a wait's are.
    if (isTerminalStatus(now.status)) await runtime.notifications.given(now.callId);
    return { ...toolResultOf(now), _meta: { [RELATED_TASK_META_KEY]: { taskId } } };
  });

  server.setRequestHandler('tasks/list', { params: ListParams }, async (params) => {
    const given = params?.cursor;
    const cursor = given === undefined ? undefined : serving.cursors.open(scope.tenant, given);
    if (given !== undefined && cursor === undefined) {
      throw new ProtocolError(
        ProtocolErrorCode.InvalidParams,
        'Invalid cursor: not one a page of tasks/list gave',
      );
    }
    // A task id reaches its task from any session of the tenant; a list shows this session's own.
    const page = await runtime.list({
      sessionId: scope.inside(TASK_SESSIONS + serving.sessionName),
      ...(cursor ? { cursor } : {}),
    });
    return {
      tasks: page.calls.map((record) => legacyTaskOf(record, serving)),
      ...(page.nextCursor ? { nextCursor: serving.cursors.seal(scope.tenant, page.nextCursor) } : {}),
    };
  });

  server.setRequestHandler('tasks/cancel', { params: TaskParams }, async ({ taskId }) => {
    const record = await find(taskId);
    if (isTerminalStatus(record.status)) {
      throw new ProtocolError(
        ProtocolErrorCode.InvalidParams,
        `Cannot cancel task in terminal status: ${legacyTaskOf(record, serving).status}`,
      );
    }
    await runtime.cancel(record.callId, 'The MCP client cancelled the task.');
    return legacyTaskOf(await reread(serving, record), serving);
  });
}

/** The params of a 2026-07-28 task method, once the client has shown it declared the extension. */
function taskParams<T>(schema: z.ZodType<T>, params: unknown, context: ServerContext): T {
  if (!takesTasks(context)) {
    throw new MissingRequiredClientCapabilityError(
      { requiredCapabilities: { extensions: { [TASKS_EXTENSION]: {} } } },
      'Missing required client capability',
    );
  }
  const parsed = schema.safeParse(params);
  if (!parsed.success) {
    throw new ProtocolError(
      ProtocolErrorCode.InvalidParams,
      `Invalid params: ${z.prettifyError(parsed.error)}`,
    );
  }
  return parsed.data;
}

/**
 * 2026-07-28 with the tasks extension: `tasks/get` inlines the result, `tasks/update` answers an
 * approval, `tasks/cancel` acknowledges. A task is any call this scope made over MCP.
 */
export function serveTasks(server: Server, serving: Serving): void {
  const { runtime, scope } = serving;
  const find = async (taskId: string) => {
    const record = await serving.runtime.get(scope.inside(taskId));
    const own = [CALL_SESSIONS, TASK_SESSIONS].some((prefix) =>
      record?.sessionId.startsWith(scope.inside(prefix)),
    );
    if (!record || !own) {
      throw new ProtocolError(ProtocolErrorCode.InvalidParams, 'Failed to retrieve task: Task not found');
    }
    return record;
  };

  server.setRequestHandler('tasks/get', { params: AnyParams }, async (given, context) => {
    const { taskId } = taskParams(TaskParams, given, context);
    const record = await find(taskId);
    // An ended task's answer carries its result: the client has it, as a wait's caller has.
    if (isTerminalStatus(record.status)) await runtime.notifications.given(record.callId);
    return detailedTaskOf(record, serving);
  });

  server.setRequestHandler('tasks/update', { params: AnyParams }, async (given, context) => {
    const params = taskParams(UpdateParams, given, context);
    const record = await find(params.taskId);
    // The SDK lifts `inputResponses` out of the params, as it does for every multi-round-trip request.
    const answer = ElicitResult.safeParse(context.mcpReq.inputResponses?.[APPROVAL_INPUT_KEY]);
    // Responses to requests that are not outstanding are ignored, as the extension says.
    const responses = context.mcpReq.inputResponses ?? {};
    for (const input of await runtime.inputs.pending(record.callId)) {
      const response = responses[input.name];
      if (typeof response === 'object' && response !== null && !Array.isArray(response)) {
        await runtime.inputs.resolve(input.key, { value: response });
      }
    }
    if (record.approval === 'pending' && answer.success) await answerApproval(serving, record, answer.data);
    return {};
  });

  server.setRequestHandler('tasks/cancel', { params: AnyParams }, async (given, context) => {
    const { taskId } = taskParams(TaskParams, given, context);
    const record = await find(taskId);
    if (!isTerminalStatus(record.status)) {
      await runtime.cancel(record.callId, 'The MCP client cancelled the task.');
    }
    return {};
  });
}
