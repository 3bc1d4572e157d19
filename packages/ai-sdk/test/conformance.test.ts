import type { BridgeConversation, BridgeDriver, BridgeTurn } from '@baton/runtime/bridge/testing';
import { describeBridgeConformance } from '@baton/runtime/bridge/testing';
import { whenStarted } from '@baton/runtime/testing';
import { bridgeConformanceOptions } from '@baton/test-support';
import { generateText, type ModelMessage, stepCountIs } from 'ai';
import { MockLanguageModelV3 } from 'ai/test';
import { batonApprovalResponses, batonNotifications, batonTools, responseMessagesOf } from '../src/index.js';

type Content = Awaited<ReturnType<MockLanguageModelV3['doGenerate']>>['content'];
const usage = {
  inputTokens: { total: 10, noCache: 10, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: 5, text: 5, reasoning: undefined },
};

/** The AI SDK's own loop (`generateText`), on its mock model, with the bridge's tools and notifications. */
const driver: BridgeDriver = {
  delivery: 'pull',
  approvals: 'pause',
  async open(runtime, sessionId): Promise<BridgeConversation> {
    const tools = batonTools(runtime, { sessionId });
    const notifications = batonNotifications(runtime, { sessionId });
    let history: ModelMessage[] = [];
    let script: Content[] = [];
    let prompts: string[] = [];
    let failing = false;
    let answer = 'ok';
    const model = new MockLanguageModelV3({
      doGenerate: async ({ prompt }) => {
        prompts.push(JSON.stringify(prompt));
        if (failing) throw new Error('the model API failed');
        const content = script.shift() ?? [{ type: 'text', text: answer }];
        const calls = content.some((part) => part.type === 'tool-call');
        return {
          content,
          finishReason: { unified: calls ? 'tool-calls' : 'stop', raw: undefined },
          usage,
          warnings: [],
        };
      },
    });
    const run = async (messages: ModelMessage[], turn: BridgeTurn, signal?: AbortSignal) => {
      let steps = 0;
      const result = await generateText({
        model,
        tools,
        messages,
        prepareStep: notifications.prepareStep,
        onStepFinish: async () => {
          await notifications.onStepFinish();
          if (steps++ === 0) await turn.between?.();
        },
        stopWhen: stepCountIs(3),
        ...(signal ? { abortSignal: signal } : {}),
      });
      history = notifications.history([...messages, ...responseMessagesOf(result)]);
      return result;
    };
    const toldIn = (result: Awaited<ReturnType<typeof run>>) => {
      const results = result.steps.flatMap((step) => step.toolResults);
      return results.length === 0 ? undefined : JSON.stringify(results.map((each) => each.output));
    };
    return {
      async turn(turn) {
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
          void whenStarted(runtime, call.callId).then(() =>
            stop.abort(new Error('the user stopped the turn')),
          );
        }
        const messages: ModelMessage[] = [...history, { role: 'user', content: 'Go on.' }];
        try {
          const result = await run(messages, turn, stop.signal);
          const told = toldIn(result);
          return {
            atStart: prompts[0] ?? '',
            ...(prompts[1] ? { afterCall: prompts[1] } : {}),
            ...(told ? { told } : {}),
          };
        } catch (error) {
          if (!stop.signal.aborted) throw error;
          // The turn was stopped: the application keeps the user's words.
          history = messages;
          return { atStart: prompts[0] ?? '' };
        }
      },
      async decide(approved) {
        const asked = history
          .flatMap((message) =>
            message.role === 'assistant' && typeof message.content !== 'string' ? message.content : [],
          )
          .find((part) => part.type === 'tool-approval-request');
        if (asked?.type !== 'tool-approval-request') throw new Error('no approval was asked for');
        const messages: ModelMessage[] = [
          ...history,
          {
            role: 'tool',
            content: [{ type: 'tool-approval-response', approvalId: asked.approvalId, approved }],
          },
        ];
        await batonApprovalResponses(runtime, messages);
        script = [];
        prompts = [];
        // The AI SDK runs the approved tool before the step: the model's input has its result.
        await run(messages, {});
        return prompts[0] ?? '';
      },
      // The AI SDK keeps no history: the application keeps `notifications.history(...)`, as the README says.
      stored: async () => JSON.stringify(history),
      async close() {},
    };
  },
};

describeBridgeConformance('ai-sdk', driver, bridgeConformanceOptions);
