import type { Runtime } from '@baton/runtime';
import type { BridgeConversation, BridgeDriver, BridgeTurn } from '@baton/runtime/bridge/testing';
import { describeBridgeConformance } from '@baton/runtime/bridge/testing';
import { whenStarted } from '@baton/runtime/testing';
import { bridgeConformanceOptions } from '@baton/test-support';
import {
  type APIConnectOptions,
  DEFAULT_API_CONNECT_OPTIONS,
  initializeLogger,
  llm,
  voice,
} from '@livekit/agents';
import { beforeAll } from 'vitest';
import { batonLiveKitResults, batonLiveKitTools } from '../src/index.js';

beforeAll(() => {
  initializeLogger({ pretty: false, level: 'silent' });
});

/** LiveKit's model interface, played turn by turn: a tool call at a turn's first request, words after. */
class TurnLlm extends llm.LLM {
  turn: BridgeTurn = {};
  requests = 0;
  /** What the conversation had once the turn's `between` ran. */
  afterCall: string | undefined;
  constructor(readonly had: (betweenTurns?: boolean) => Promise<string>) {
    super();
  }
  label(): string {
    return 'scripted';
  }
  chat({
    chatCtx,
    connOptions = DEFAULT_API_CONNECT_OPTIONS,
  }: Parameters<llm.LLM['chat']>[0]): llm.LLMStream {
    return new TurnStream(this, chatCtx, connOptions, this.requests++);
  }
}

class TurnStream extends llm.LLMStream {
  constructor(
    readonly model: TurnLlm,
    chatCtx: llm.ChatContext,
    connOptions: APIConnectOptions,
    readonly index: number,
  ) {
    super(model, { chatCtx, connOptions });
  }
  protected override async run(): Promise<void> {
    const { turn } = this.model;
    const call = turn.call;
    if (this.index === 0 && call) {
      const toolCall = llm.FunctionCall.create({
        callId: call.callId,
        name: call.tool,
        args: JSON.stringify(call.args),
      });
      this.queue.put({ id: 'scripted', delta: { role: 'assistant', toolCalls: [toolCall] } });
      return;
    }
    if (this.index === (call ? 1 : 0)) {
      // The agent is thinking (after the tool's answer): a result may end now.
      await turn.between?.();
      this.model.afterCall = await this.model.had(false);
    }
    this.queue.put({ id: 'scripted', delta: { role: 'assistant', content: 'ok' } });
  }
}

/** A LiveKit voice `AgentSession` with no room (text in and out), with the bridge's tools and results. */
async function conversationOf(runtime: Runtime, sessionId: string): Promise<BridgeConversation> {
  const agent = new voice.Agent({ instructions: 'Help.', tools: batonLiveKitTools(runtime, { sessionId }) });
  /** The replies the bridge asked for (a result put in), each done once it has played out. */
  const replies: Promise<void>[] = [];
  /**
   * What the agent's model has: its chat context; between turns, once the replies asked for have
   * played out (mid-turn a reply waits for the turn's own speech, so it is not waited for).
   */
  const had = async (betweenTurns = true) => {
    if (betweenTurns) await Promise.all(replies);
    return JSON.stringify(
      agent.chatCtx.items.filter((item) => item.type === 'message').map((item) => item.textContent),
    );
  };
  const model = new TurnLlm(had);
  const session = new voice.AgentSession({ llm: model });
  await session.start({ agent });
  // The next put into the session fails (once), as a send over a closed room would.
  let failing = false;
  const generateReply = session.generateReply.bind(session);
  session.generateReply = (options) => {
    // The bridge's put of a result (a turn of the user's runs through generateReply too).
    if (failing && JSON.stringify(options?.userInput ?? '').includes('Background tool')) {
      failing = false;
      throw new Error('the room closed under the reply');
    }
    const handle = generateReply(options);
    replies.push(handle.waitForPlayout());
    return handle;
  };
  const errors: unknown[] = [];
  const results = batonLiveKitResults(runtime, session, {
    sessionId,
    onError: (error) => errors.push(error),
  });
  let closed = false;
  return {
    async turn(turn) {
      failing = turn.fails === true;
      const atStart = await had();
      model.turn = turn;
      model.requests = 0;
      model.afterCall = undefined;
      const { call } = turn;
      if (call && turn.cancels) {
        void whenStarted(runtime, call.callId).then(() => session.interrupt());
      }
      const events = (await session.run({ userInput: 'Go on.' }).wait()).events;
      const output = events.find((event) => event.type === 'function_call_output');
      const told = output?.type === 'function_call_output' ? output.item.output : undefined;
      return {
        atStart,
        ...(model.afterCall ? { afterCall: model.afterCall } : {}),
        ...(told ? { told } : {}),
      };
    },
    // The agent's chat context, as the session keeps it.
    stored: had,
    async close() {
      if (closed) return;
      closed = true;
      results.close();
      await session.close();
    },
  };
}

const driver: BridgeDriver = {
  delivery: 'push',
  // LiveKit's function tools have no confirmation step: such a call is acknowledged and waits.
  approvals: 'acknowledged',
  open: conversationOf,
};

describeBridgeConformance('livekit', driver, bridgeConformanceOptions);
