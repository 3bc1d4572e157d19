import type { McpSdkServerConfigWithInstance } from '@anthropic-ai/claude-agent-sdk';
import { type AnyTool, isToolError, replyText, toMcpTool } from '@baton/contracts';
import {
  BACKGROUND_CONTROL,
  type BackgroundControlTool,
  backgroundControl,
  type Runtime,
} from '@baton/runtime';
import { bridgeCall, callAwaitingApproval, replyOf, runApproved } from '@baton/runtime/bridge';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import {
  CallToolRequestSchema,
  type CallToolResult,
  ListToolsRequestSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { VERSION } from './version.js';

export interface BatonMcpServerOptions {
  /** The Baton session of the conversation: its background results come back to it. */
  sessionId: string;
  /** The server's name in `mcpServers`: its tools are `mcp__<name>__<tool>`. Default `baton`. */
  name?: string;
}

/** Where Claude Code names the model's tool use in an MCP tool call's `_meta`. */
const TOOL_USE_ID = 'claudecode/toolUseId';

const text = (value: string, isError = false): CallToolResult => ({
  content: [{ type: 'text', text: value }],
  ...(isError ? { isError: true } : {}),
});

/** A background-control tool's answer: what it found, as JSON, or its refusal, for the model. */
async function controlled(run: () => Promise<unknown>): Promise<CallToolResult> {
  try {
    return text(JSON.stringify(await run()));
  } catch (error) {
    if (isToolError(error)) return text(error.message, true);
    throw error;
  }
}

/**
 * A runtime's tools served to the Claude Agent SDK as an in-process MCP server (what
 * `createSdkMcpServer` makes), for `query({ options: { mcpServers: { baton: server } } })`.
 *
 * Each call is a Baton call in the session: validated (Baton checks the arguments against the same
 * contract), admitted, recorded, and moved to the background past its inline budget, when the
 * model is given the acknowledgement at once and Claude goes on. Beside the tools are
 * `check_background`, `wait_background`, `cancel_background` and `list_background`, for the
 * session's calls in the background; their ends come into the next turn through `batonHooks`.
 *
 * A tool that needs approval is approved by the SDK's permission for the tool use: Claude Code asks
 * (`canUseTool`, or the permission mode) before the call reaches the server, so a call that
 * reaches it was allowed; the Baton call is recorded as approved.
 */
export function batonMcpServer(
  runtime: Runtime,
  { sessionId, name = 'baton' }: BatonMcpServerOptions,
): McpSdkServerConfigWithInstance {
  const control = backgroundControl(runtime);
  const own = runtime.tools.definitions();
  const served = new Set(own.map((tool) => tool.name));
  // The runtime may have them already as builtins; then they are its own calls.
  const controls = control.tools.filter((tool) => !served.has(tool.name));
  const declared: AnyTool[] = [...own, ...controls];
  const isControl = (tool: string): tool is BackgroundControlTool =>
    !served.has(tool) && (BACKGROUND_CONTROL as readonly string[]).includes(tool);

  const instance = new McpServer({ name, version: VERSION }, { capabilities: { tools: {} } });
  instance.server.setRequestHandler(ListToolsRequestSchema, async () => ({
    tools: declared.map((tool) => {
      const {
        name: toolName,
        title,
        description,
        inputSchema,
        annotations,
      } = toMcpTool(tool, {
        defaultMode: runtime.defaultMode,
      });
      return {
        name: toolName,
        description,
        inputSchema: inputSchema as { type: 'object' },
        annotations,
        ...(title !== undefined ? { title } : {}),
      };
    }),
  }));
  instance.server.setRequestHandler(
    CallToolRequestSchema,
    async (request, extra): Promise<CallToolResult> => {
      const { name: tool, arguments: args = {}, _meta: meta } = request.params;
      const { signal } = extra;
      if (isControl(tool)) return controlled(() => control.run(tool, args, { sessionId, signal }));
      const definition = own.find((each) => each.name === tool);
      // Claude Code names the model's tool use in the request: the Baton call's id, so a tool use
      // made again is the same call.
      const toolUseId = meta?.[TOOL_USE_ID];
      const callId = typeof toolUseId === 'string' && toolUseId !== '' ? toolUseId : undefined;
      const call = { name: tool, args, sessionId, callId };
      if (definition?.execution.needsApproval !== undefined) {
        const named = { ...call, callId: callId ?? crypto.randomUUID() };
        const reply = (await callAwaitingApproval(runtime, named))
          ? await runApproved(runtime, named, signal)
          : await replyOf(runtime, named, signal);
        return replied(reply);
      }
      return replied(await bridgeCall(runtime, { ...call, signal }));
    },
  );
  return { type: 'sdk', name, instance };
}

function replied(reply: Parameters<typeof replyText>[0]): CallToolResult {
  const { text: said, isError } = replyText(reply);
  return text(said, isError);
}
