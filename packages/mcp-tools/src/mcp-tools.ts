import {
  type AnyTool,
  defineTool,
  type ExecutionOptions,
  type JsonSchema,
  TOOL_NAME_PATTERN,
} from '@baton/contracts';
import type { Client, Tool as McpTool } from '@modelcontextprotocol/client';
import {
  createTaskSessionFromClient,
  type SerializedTaskReference,
  type TaskEnabledSession,
  type ToolExecution,
  toolDeclarationFromMcpTool,
} from '@modelcontextprotocol/ext-tasks/client';
import { valueOfOutcome } from './remote-result.js';

export interface McpToolsOptions {
  /**
   * The remote endpoint's stable identity (its URL, say). Remote task references are kept under
   * it, and a restarted process resumes only the tasks of the same endpoint.
   */
  endpointId: string;
  /**
   * The ext-tasks session to call through. Default: one made from the client, which speaks the
   * 2025-11-25 tasks. A 2026-07-28 server needs the session made with the raw dispatch and framing
   * of `createTaskSessionFromClient`'s options.
   */
  session?: TaskEnabledSession;
  /** Put before each remote tool's name (`github_`), so that two servers' tools never clash. */
  prefix?: string;
  /** Execution options for every remote tool. Default mode `auto`: a slow one goes to the background. */
  execution?: ExecutionOptions;
}

/** What the call's durable step keeps: the remote task to follow, or the remote call's result. */
type RemoteStep = { task: SerializedTaskReference } | { result: unknown };

/** The arguments as the session sends them: they passed the remote's JSON Schema already. */
type Args = NonNullable<Parameters<TaskEnabledSession['callTool']>[1]>;

/** A Baton name for a remote tool: MCP allows names (dots, slashes) that Baton's pattern does not. */
function batonName(prefix: string, remote: string): string {
  const name = `${prefix}${remote}`.replace(/[^A-Za-z0-9_-]/g, '_').slice(0, 64);
  return TOOL_NAME_PATTERN.test(name) ? name : `tool_${name}`.slice(0, 64);
}

function remoteTool(session: TaskEnabledSession, remote: McpTool, options: McpToolsOptions): AnyTool {
  const declaration = toolDeclarationFromMcpTool(remote);
  return defineTool({
    name: batonName(options.prefix ?? '', remote.name),
    ...(remote.title !== undefined ? { title: remote.title } : {}),
    description: remote.description ?? remote.title ?? remote.name,
    // Baton checks the arguments against the remote's own schema before anything is sent.
    input: remote.inputSchema as JsonSchema,
    execution: {
      mode: 'auto',
      // Taken up again after a crash: the stored step resumes the remote task instead of calling again.
      idempotent: true,
      readOnly: remote.annotations?.readOnlyHint ?? false,
      ...options.execution,
    },
    async execute(args, ctx) {
      let live: ToolExecution<unknown> | undefined;
      const step = await ctx.step<RemoteStep>(`mcp:${remote.name}`, async () => {
        // Not aborted by the call's signal: a task the remote made must be known, to be cancelled.
        const execution = await session.callTool(remote.name, args as Args, {
          declaration,
          task: { preference: 'prefer' },
        });
        if (execution.kind === 'immediate') {
          const { outcome } = await execution.settle({ signal: ctx.signal });
          return { result: valueOfOutcome(outcome) };
        }
        live = execution;
        return { task: execution.serializeReference() };
      });
      if ('result' in step) return step.result;
      const execution = live ?? (await session.resumeTask(step.task, { declaration, signal: ctx.signal }));
      // Cancelling the Baton call cancels the remote task; settling only stops waiting for it.
      const cancelRemote = () =>
        void execution.cancel().catch((error: unknown) => {
          ctx.log('stderr', `The remote task could not be cancelled: ${String(error)}\n`);
        });
      // The call may have been cancelled while the task's reference was being stored.
      if (ctx.signal.aborted) cancelRemote();
      else ctx.signal.addEventListener('abort', cancelRemote, { once: true });
      try {
        const { outcome } = await execution.settle({
          signal: ctx.signal,
          onEvent: (event) => {
            if (event.type === 'task' && event.task.statusMessage) ctx.status(event.task.statusMessage);
          },
        });
        return valueOfOutcome(outcome);
      } finally {
        ctx.signal.removeEventListener('abort', cancelRemote);
      }
    },
  });
}

/**
 * A remote MCP server's tools as Baton tools. A call of one is a Baton call like any other:
 * validated against the remote schema, admitted, recorded, promoted past its inline budget, shown in
 * the inspector. Where the remote tool can run as a task, it is asked to, and the remote task's
 * reference is a durable step of the call: a Baton process that dies mid-call is followed by one
 * that resumes following the same remote task, instead of calling the tool again.
 */
export async function mcpTools(client: Client, options: McpToolsOptions): Promise<AnyTool[]> {
  const { tools } = await client.listTools();
  const declarations = new Map(tools.map((tool) => [tool.name, toolDeclarationFromMcpTool(tool)]));
  const session =
    options.session ??
    createTaskSessionFromClient(client, {
      endpointId: options.endpointId,
      tools: { currentTool: (name) => declarations.get(name) },
    });
  return tools.map((tool) => remoteTool(session, tool, options));
}
