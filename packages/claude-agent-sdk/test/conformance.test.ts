import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { query, type SDKMessage } from '@anthropic-ai/claude-agent-sdk';
import type { Runtime } from '@baton/runtime';
import type { BridgeConversation, BridgeDriver, BridgeTurn } from '@baton/runtime/bridge/testing';
import { describeBridgeConformance } from '@baton/runtime/bridge/testing';
import { bridgeConformanceOptions } from '@baton/test-support';
import { filter, firstValueFrom } from 'rxjs';
import { afterAll, beforeAll } from 'vitest';
import { batonHooks, batonMcpServer } from '../src/index.js';
import { type AnswerBlock, type MessagesRequest, MessagesStandIn } from './messages-stand-in.js';

const home = mkdtempSync(join(tmpdir(), 'baton-claude-conformance-'));
afterAll(() => rmSync(home, { recursive: true, force: true }));

/** The turn being played: how the stand-in answers each of its requests. */
let playing: { turn: BridgeTurn; requests: string[] } = { turn: {}, requests: [] };
let standIn: MessagesStandIn;
beforeAll(async () => {
  standIn = await MessagesStandIn.start(async (request: MessagesRequest): Promise<AnswerBlock[]> => {
    // Claude Code asks for a title and the like with requests of its own: only the turn's count.
    if (!JSON.stringify(request.messages).includes('Go on.')) return [{ type: 'text', text: 'ok' }];
    const { turn, requests } = playing;
    const index = requests.length;
    requests.push(JSON.stringify(request.messages));
    if (turn.fails) throw new Error('the request failed');
    const { call } = turn;
    if (index === 0 && call)
      return [{ type: 'tool_use', id: call.callId, name: `mcp__baton__${call.tool}`, input: call.args }];
    return [{ type: 'text', text: turn.answer ?? 'ok' }];
  });
  return () => standIn.close();
});

/** The Claude Agent SDK's `query()`: Claude Code's own process against the Messages API stand-in. */
function conversationOf(
  runtime: Runtime,
  sessionId: string,
  resumeFrom: { last?: string },
): BridgeConversation {
  const own = batonHooks(runtime, { sessionId });
  // A result may end once the tool call was answered, before the bridge's PostToolUse looks.
  const hooks = {
    ...own,
    PostToolUse: (own.PostToolUse ?? []).map((matcher) => ({
      ...matcher,
      hooks: matcher.hooks.map((hook) => async (...args: Parameters<typeof hook>) => {
        await playing.turn.between?.();
        return hook(...args);
      }),
    })),
  };
  return {
    async turn(turn) {
      playing = { turn, requests: [] };
      const stop = new AbortController();
      const { call } = turn;
      if (call && turn.cancels) {
        void firstValueFrom(runtime.events$.pipe(filter((event) => event.type === 'started'))).then(() =>
          stop.abort(),
        );
      }
      const messages: SDKMessage[] = [];
      try {
        for await (const message of query({
          prompt: 'Go on.',
          options: {
            cwd: home,
            settingSources: [],
            mcpServers: { baton: batonMcpServer(runtime, { sessionId }) },
            hooks,
            allowedTools: [
              'research_interrupt',
              'research_when_idle',
              'research_silent',
              'research_steered',
              'research_reporting',
              'steer_background',
              'look_up',
              'transfer',
              'deploy',
              'research_stalling',
            ].map((tool) => `mcp__baton__${tool}`),
            abortController: stop,
            ...(resumeFrom.last ? { resume: resumeFrom.last } : {}),
            env: {
              ...process.env,
              HOME: home,
              CLAUDE_CONFIG_DIR: join(home, '.claude'),
              ANTHROPIC_BASE_URL: standIn.url,
              ANTHROPIC_API_KEY: 'stand-in',
              CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
            },
          },
        })) {
          messages.push(message);
        }
      } catch (error) {
        if (!stop.signal.aborted) throw error;
      }
      const result = messages.find((message) => message.type === 'result');
      if (result?.subtype !== 'success' && !stop.signal.aborted)
        throw new Error(`the turn failed: ${result?.subtype}`);
      if (result) resumeFrom.last = result.session_id;
      const [atStart = '', afterCall] = playing.requests;
      return { atStart, ...(afterCall ? { afterCall, told: afterCall } : {}) };
    },
    // Claude Code's transcript of the session, as it keeps it on disk.
    stored: async () => {
      const name = `${resumeFrom.last}.jsonl`;
      const projects = join(home, '.claude', 'projects');
      const files = readdirSync(projects, { recursive: true, encoding: 'utf8' }).filter((file) =>
        file.endsWith(name),
      );
      // Its conversation's entries, each once: the messages and the hooks' context (not the
      // request blobs it caches).
      type Entry = { type?: string; message?: { content?: unknown }; attachment?: { content?: unknown } };
      const entries = files
        .flatMap((file) => readFileSync(join(projects, file), 'utf8').split('\n'))
        .filter((line) => line !== '')
        .map((line) => JSON.parse(line) as Entry)
        .filter((entry) => entry.type !== 'api-request-blob');
      return JSON.stringify(
        entries.map((entry) => entry.attachment?.content ?? entry.message?.content ?? null),
      );
    },
    async close() {},
  };
}

/** The SDK session last talked in: a restart goes on with it, as Claude Code keeps it on disk. */
let resumeFrom: { last?: string } = {};

const driver: BridgeDriver = {
  delivery: 'pull',
  // Claude Code asks its permission before the tool use reaches the server.
  approvals: 'permission',
  async open(runtime, sessionId) {
    resumeFrom = {};
    return conversationOf(runtime, sessionId, resumeFrom);
  },
  reopen: async (runtime, sessionId) => conversationOf(runtime, sessionId, resumeFrom),
};

describeBridgeConformance('claude-agent-sdk', driver, bridgeConformanceOptions);
