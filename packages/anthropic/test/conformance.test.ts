import Anthropic from '@anthropic-ai/sdk';
import type { BridgeConversation, BridgeDriver } from '@baton/runtime/bridge/testing';
import { describeBridgeConformance } from '@baton/runtime/bridge/testing';
import { whenStarted } from '@baton/runtime/testing';
import { bridgeConformanceOptions } from '@baton/test-support';
import { anthropicNotifications, anthropicTools, handleToolUses } from '../src/index.js';

type Block = Anthropic.Messages.ContentBlock;

/** A Messages loop of the README's own, on the SDK's client with a scripted `fetch`. */
const driver: BridgeDriver = {
  delivery: 'pull',
  // The Messages API has no confirmation step: such a call is acknowledged and waits.
  approvals: 'acknowledged',
  async open(runtime, sessionId): Promise<BridgeConversation> {
    let script: Block[][] = [];
    let requests: string[] = [];
    let failing = false;
    let answer = 'ok';
    const fetch = async (_url: string | URL | Request, init?: RequestInit) => {
      requests.push(String(init?.body));
      if (failing)
        return new Response('{"type":"error","error":{"type":"api_error","message":"down"}}', {
          status: 500,
        });
      const content = script.shift() ?? [{ type: 'text', text: answer, citations: null }];
      const message = {
        id: `msg_${requests.length}`,
        type: 'message',
        role: 'assistant',
        model: 'claude-test',
        content,
        stop_reason: content.some((block) => block.type === 'tool_use') ? 'tool_use' : 'end_turn',
        stop_sequence: null,
        usage: { input_tokens: 10, output_tokens: 5 },
      };
      return new Response(JSON.stringify(message), { headers: { 'content-type': 'application/json' } });
    };
    const client = new Anthropic({ apiKey: 'test-key', fetch, maxRetries: 0 });
    const notifications = anthropicNotifications(runtime, { sessionId });
    let messages: Anthropic.Messages.MessageParam[] = [];
    return {
      async turn(turn) {
        requests = [];
        failing = turn.fails === true;
        answer = turn.answer ?? 'ok';
        const { call } = turn;
        script = call
          ? [[{ type: 'tool_use', id: call.callId, name: call.tool, input: call.args } as Block]]
          : [];
        const stop = new AbortController();
        if (call && turn.cancels) {
          void whenStarted(runtime, call.callId).then(() => stop.abort());
        }
        // The history of the turns that answered: a failed request's turn is not kept.
        const conversation = [...messages];
        conversation.push({
          role: 'user',
          content: [...(await notifications.blocks({ idle: true })), { type: 'text', text: 'Go on.' }],
        });
        let told: string | undefined;
        for (;;) {
          const message = await client.messages.create({
            model: 'claude-test',
            max_tokens: 1024,
            tools: anthropicTools(runtime),
            messages: conversation,
          });
          await notifications.confirm();
          conversation.push({ role: 'assistant', content: message.content });
          if (message.stop_reason !== 'tool_use') break;
          const results = await handleToolUses(runtime, message, { sessionId, signal: stop.signal });
          told = JSON.stringify(results);
          await turn.between?.();
          conversation.push({
            role: 'user',
            content: [...results, ...(await notifications.blocks({ idle: false }))],
          });
        }
        messages = conversation;
        const [atStart = '', afterCall] = requests;
        return { atStart, ...(afterCall ? { afterCall } : {}), ...(told ? { told } : {}) };
      },
      // The application keeps the messages, as the README says.
      stored: async () => JSON.stringify(messages),
      async close() {},
    };
  },
};

describeBridgeConformance('anthropic', driver, bridgeConformanceOptions);
