import type { BridgeConversation, BridgeDriver, BridgeTurn } from '@baton/runtime/bridge/testing';
import { describeBridgeConformance } from '@baton/runtime/bridge/testing';
import { whenStarted } from '@baton/runtime/testing';
import { bridgeConformanceOptions } from '@baton/test-support';
import { Mastra } from '@mastra/core';
import { Agent, type MastraDBMessage } from '@mastra/core/agent';
import type { InputProcessor } from '@mastra/core/processors';
import { InMemoryStore } from '@mastra/core/storage';
import { MockLanguageModelV3 } from 'ai/test';
import { batonMastraTools, batonNotificationsProcessor } from '../src/index.js';

type Content = Awaited<ReturnType<MockLanguageModelV3['doGenerate']>>['content'];
const USAGE = {
  inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: 1, text: 1, reasoning: 0 },
};

/** A Mastra agent (with a Mastra instance for suspended runs) on the AI SDK's mock model. */
const driver: BridgeDriver = {
  delivery: 'pull',
  approvals: 'pause',
  async open(runtime, sessionId): Promise<BridgeConversation> {
    let script: Content[] = [];
    let prompts: string[] = [];
    let failing = false;
    let answer = 'ok';
    let current: BridgeTurn = {};
    const model = new MockLanguageModelV3({
      doGenerate: async ({ prompt }) => {
        prompts.push(JSON.stringify(prompt.filter((message) => message.role !== 'system')));
        if (failing) throw new Error('the model API failed');
        const content = script.shift() ?? [{ type: 'text', text: answer }];
        const calls = content.some((part) => part.type === 'tool-call');
        return {
          content,
          finishReason: { unified: calls ? 'tool-calls' : 'stop', raw: undefined },
          usage: USAGE,
          warnings: [],
        };
      },
    });
    const betweenCalls: InputProcessor = {
      id: 'between-calls',
      async processInputStep({ stepNumber }) {
        if (stepNumber === 1) await current.between?.();
        return undefined;
      },
    };
    const assistant = new Agent({
      id: 'assistant',
      name: 'assistant',
      instructions: 'Help.',
      model,
      tools: batonMastraTools(runtime, { sessionId }),
      inputProcessors: [betweenCalls, batonNotificationsProcessor(runtime, { sessionId })],
    });
    const agent = new Mastra({ agents: { assistant }, storage: new InMemoryStore(), logger: false }).getAgent(
      'assistant',
    );
    let history: MastraDBMessage[] = [];
    let suspended: { runId: string; toolCallId: string } | undefined;
    const toldIn = () => prompts[1];
    return {
      async turn(turn) {
        current = turn;
        prompts = [];
        failing = turn.fails === true;
        answer = turn.answer ?? 'ok';
        const { call } = turn;
        script = call
          ? [
              [
                {
                  type: 'tool-call',
                  toolCallId: call.callId,
                  toolName: call.tool,
                  input: JSON.stringify(call.args),
                },
              ],
            ]
          : [];
        const stop = new AbortController();
        if (call && turn.cancels) {
          void whenStarted(runtime, call.callId).then(() => stop.abort());
        }
        const result = await agent
          .generate([...history, { role: 'user', content: 'Go on.' }], { abortSignal: stop.signal })
          .catch((error: unknown) => {
            if (stop.signal.aborted) return undefined;
            throw error;
          });
        if (result?.error) throw result.error;
        if (result?.finishReason === 'suspended' && call && result.runId)
          suspended = { runId: result.runId, toolCallId: call.callId };
        else if (result) history = result.messages;
        const [atStart = '', afterCall] = prompts;
        const told = suspended ? undefined : toldIn();
        return { atStart, ...(afterCall ? { afterCall } : {}), ...(told ? { told } : {}) };
      },
      async decide(approved) {
        if (!suspended) throw new Error('no run suspended for an approval');
        prompts = [];
        current = {};
        const resumed = await agent.resumeGenerate({ approved }, suspended);
        suspended = undefined;
        history = resumed.messages;
        return prompts[0] ?? '';
      },
      // The application keeps `result.messages`, as the README says.
      stored: async () =>
        JSON.stringify(
          history.map((message) =>
            message.content.parts.map((part) => ('text' in part ? part.text : part.type)),
          ),
        ),
      async close() {},
    };
  },
};

describeBridgeConformance('mastra', driver, bridgeConformanceOptions);
