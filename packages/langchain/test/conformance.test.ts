import type { BridgeConversation, BridgeDriver, BridgeTurn } from '@baton/runtime/bridge/testing';
import { describeBridgeConformance } from '@baton/runtime/bridge/testing';
import { whenStarted } from '@baton/runtime/testing';
import { bridgeConformanceOptions } from '@baton/test-support';
import { BaseChatModel } from '@langchain/core/language_models/chat_models';
import { AIMessage, type BaseMessage, HumanMessage, ToolMessage } from '@langchain/core/messages';
import type { ChatResult } from '@langchain/core/outputs';
import { Command, MemorySaver } from '@langchain/langgraph';
import { createAgent, createMiddleware } from 'langchain';
import { batonLangChainTools, batonNotificationsMiddleware } from '../src/index.js';

/** A chat model of LangChain's own kind, scripted turn by turn; it keeps what each call was given. */
class TurnModel extends BaseChatModel {
  script: AIMessage[] = [];
  requests: string[] = [];
  failing = false;
  answer = 'ok';
  _llmType(): string {
    return 'scripted';
  }
  override bindTools(): this {
    return this;
  }
  async _generate(messages: BaseMessage[]): Promise<ChatResult> {
    this.requests.push(messages.map((message) => JSON.stringify(message.content)).join('\n'));
    if (this.failing) throw new Error('the model API failed');
    const message = this.script.shift() ?? new AIMessage(this.answer);
    return { generations: [{ message, text: typeof message.content === 'string' ? message.content : '' }] };
  }
}

/** `createAgent` (LangGraph underneath), with a checkpointer, the bridge's tools and its middleware. */
const driver: BridgeDriver = {
  delivery: 'pull',
  approvals: 'pause',
  async open(runtime, sessionId): Promise<BridgeConversation> {
    const model = new TurnModel({});
    let current: BridgeTurn = {};
    const betweenCalls = createMiddleware({
      name: 'BetweenCalls',
      beforeModel: async () => {
        if (model.requests.length === 1) await current.between?.();
        return undefined;
      },
    });
    const agent = createAgent({
      model,
      tools: batonLangChainTools(runtime, { sessionId }),
      middleware: [betweenCalls, batonNotificationsMiddleware(runtime, { sessionId })],
      checkpointer: new MemorySaver(),
    });
    const thread = { configurable: { thread_id: sessionId } };
    const toldIn = (messages: BaseMessage[]) => {
      const answers = messages.filter((message) => ToolMessage.isInstance(message));
      return answers.length === 0 ? undefined : JSON.stringify(answers.at(-1)?.content);
    };
    return {
      async turn(turn) {
        current = turn;
        model.requests = [];
        model.failing = turn.fails === true;
        model.answer = turn.answer ?? 'ok';
        const { call } = turn;
        model.script = call
          ? [
              new AIMessage({
                content: '',
                tool_calls: [{ id: call.callId, name: call.tool, args: call.args, type: 'tool_call' }],
              }),
            ]
          : [];
        const stop = new AbortController();
        if (call && turn.cancels) {
          void whenStarted(runtime, call.callId).then(() => stop.abort());
        }
        let told: string | undefined;
        try {
          const result = await agent.invoke(
            { messages: [new HumanMessage('Go on.')] },
            { ...thread, signal: stop.signal },
          );
          told = '__interrupt__' in result ? undefined : toldIn(result.messages);
        } catch (error) {
          if (!stop.signal.aborted) throw error;
        }
        const [atStart = '', afterCall] = model.requests;
        return { atStart, ...(afterCall ? { afterCall } : {}), ...(told ? { told } : {}) };
      },
      async decide(approved) {
        model.requests = [];
        current = {};
        const result = await agent.invoke(new Command({ resume: { approved } }), thread);
        return toldIn(result.messages) ?? '';
      },
      // The thread's state, as the checkpointer keeps it.
      stored: async () => {
        // The agent's state type names its middleware's state; the messages are what is read here.
        const state = await (
          agent as unknown as {
            getState(config: typeof thread): Promise<{ values: { messages: BaseMessage[] } }>;
          }
        ).getState(thread);
        return JSON.stringify(state.values.messages.map((message) => message.content));
      },
      async close() {},
    };
  },
};

describeBridgeConformance('langchain', driver, bridgeConformanceOptions);
