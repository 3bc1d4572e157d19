import { join } from 'node:path';
import { type CanUseTool, query, type SDKMessage } from '@anthropic-ai/claude-agent-sdk';
import type { Runtime } from '@baton/runtime';
import { batonHooks, batonMcpServer } from '../src/index.js';

export const SESSION = 'chat-1';

export interface AskOptions {
  /** The conversation to go on with: the SDK session of an earlier turn. */
  resume?: string;
  /** Claude Code asks it before each tool use; without it, the Baton tools the tests use are allowed. */
  canUseTool?: CanUseTool;
}

/**
 * One turn of a conversation: a whole `query()` of the SDK, Claude Code's own process pointed at
 * the Messages API stand-in at `baseUrl`, its sessions and settings under `home`, with the
 * runtime's tools and hooks.
 */
export function asker(runtime: Runtime, baseUrl: string, home: string) {
  return async (prompt: string, options: AskOptions = {}) => {
    const messages: SDKMessage[] = [];
    for await (const message of query({
      prompt,
      options: {
        cwd: home,
        settingSources: [],
        mcpServers: { baton: batonMcpServer(runtime, { sessionId: SESSION }) },
        hooks: batonHooks(runtime, { sessionId: SESSION }),
        ...(options.canUseTool
          ? { canUseTool: options.canUseTool }
          : {
              allowedTools: ['research', 'look_up', 'wait_background', 'cancel_background'].map(
                (tool) => `mcp__baton__${tool}`,
              ),
            }),
        ...(options.resume ? { resume: options.resume } : {}),
        env: {
          ...process.env,
          HOME: home,
          CLAUDE_CONFIG_DIR: join(home, '.claude'),
          ANTHROPIC_BASE_URL: baseUrl,
          ANTHROPIC_API_KEY: 'stand-in',
          CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
        },
      },
    })) {
      messages.push(message);
    }
    const result = messages.find((message) => message.type === 'result');
    return { messages, result, sessionId: result?.session_id ?? '' };
  };
}
