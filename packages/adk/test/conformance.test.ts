import type { Runtime } from '@baton/runtime';
import type { BridgeConversation, BridgeDriver, BridgeTurn } from '@baton/runtime/bridge/testing';
import { describeBridgeConformance } from '@baton/runtime/bridge/testing';
import { whenStarted } from '@baton/runtime/testing';
import { bridgeConformanceOptions } from '@baton/test-support';
import {
  BaseLlm,
  type Event,
  getFunctionCalls,
  InMemorySessionService,
  LlmAgent,
  type LlmRequest,
  type LlmResponse,
  Runner,
} from '@google/adk';
import { batonAdkResults, batonAdkTools } from '../src/index.js';

const USER = 'ada';

/** ADK's model interface played turn by turn (a `BaseLlm` of the test's own); it keeps each request. */
class TurnLlm extends BaseLlm {
  requests: string[] = [];
  script: NonNullable<LlmResponse['content']>[] = [];
  failing = false;
  answer = 'ok';
  /** Runs before the run's second request: after the tool call was answered. */
  between: BridgeTurn['between'];
  runRequests = 0;
  constructor() {
    super({ model: 'scripted' });
  }
  override async *generateContentAsync(request: LlmRequest): AsyncGenerator<LlmResponse, void> {
    if (++this.runRequests === 2) await this.between?.();
    this.requests.push(JSON.stringify(request.contents));
    if (this.failing) throw new Error('the model API failed');
    yield {
      content: this.script.shift() ?? { role: 'model', parts: [{ text: this.answer }] },
      turnComplete: true,
    };
  }
  override async connect(): Promise<never> {
    throw new Error('the scripted model has no live connection');
  }
}

const collect = async (events: AsyncIterable<Event>) => {
  const all: Event[] = [];
  for await (const event of events) all.push(event);
  return all;
};

/**
 * An ADK `LlmAgent` through an `InMemoryRunner`: the app brings the session's results back with
 * `batonAdkResults` between runs, at a turn's start (idle) and right after a run (the next step).
 */
/** The ADK sessions of the conversation last opened: kept across a restart, as a database session service keeps them. */
let sessions = new InMemorySessionService();

const driver: BridgeDriver = {
  delivery: 'pull',
  approvals: 'pause',
  open(runtime, sessionId) {
    sessions = new InMemorySessionService();
    return conversationOf(runtime, sessionId);
  },
  reopen: (runtime, sessionId) => conversationOf(runtime, sessionId),
};

async function conversationOf(runtime: Runtime, sessionId: string): Promise<BridgeConversation> {
  const model = new TurnLlm();
  const agent = new LlmAgent({
    name: 'assistant',
    model,
    instruction: 'Help.',
    tools: batonAdkTools(runtime, { sessionId }),
  });
  const runner = new Runner({ agent, appName: 'baton-adk-conformance', sessionService: sessions });
  const adkSession = sessionId;
  const known = await sessions.getSession({ appName: runner.appName, userId: USER, sessionId });
  if (!known) await sessions.createSession({ appName: runner.appName, userId: USER, sessionId });
  const results = (idle: boolean) =>
    collect(
      batonAdkResults(runtime, runner, {
        userId: USER,
        sessionId: adkSession,
        batonSessionId: sessionId,
        idle,
      }),
    );
  const sessionText = async () =>
    JSON.stringify(
      (
        await runner.sessionService.getSession({
          appName: runner.appName,
          userId: USER,
          sessionId: adkSession,
        })
      )?.events.map((event) => event.content),
    );
  const run = (message: string | NonNullable<LlmResponse['content']>, signal?: AbortSignal) => {
    model.runRequests = 0;
    const newMessage = typeof message === 'string' ? { role: 'user', parts: [{ text: message }] } : message;
    return collect(
      runner.runAsync({
        userId: USER,
        sessionId: adkSession,
        newMessage,
        ...(signal ? { abortSignal: signal } : {}),
      }),
    );
  };
  let confirmation: string | undefined;
  return {
    async turn(turn) {
      model.requests = [];
      model.failing = turn.fails === true;
      model.between = undefined;
      const { call } = turn;
      // An ADK run tells of a model call that failed as an event, not by throwing.
      model.answer = 'ok';
      const failed = (await results(true)).find((event) => event.errorCode !== undefined);
      if (failed) throw new Error(`the run failed: ${failed.errorMessage ?? failed.errorCode}`);
      model.requests = [];
      model.between = turn.between;
      // The user's run answers so; the runs of the results before it say `ok`.
      model.answer = turn.answer ?? 'ok';
      model.script = call
        ? [
            {
              role: 'model',
              parts: [{ functionCall: { id: call.callId, name: call.tool, args: call.args } }],
            },
          ]
        : [];
      const stop = new AbortController();
      if (call && turn.cancels) {
        void whenStarted(runtime, call.callId).then(() => stop.abort());
      }
      const events = await run('Go on.', stop.signal);
      model.between = undefined;
      confirmation = events
        .flatMap(getFunctionCalls)
        .find((each) => each.name === 'adk_request_confirmation')?.id;
      const [atStart = '', told] = model.requests;
      if (!call) return { atStart };
      // The next step of an ADK session is a run after this one: what is due mid-run comes in there.
      await results(false);
      return { atStart, afterCall: await sessionText(), ...(told && !confirmation ? { told } : {}) };
    },
    async decide(approved) {
      model.requests = [];
      const id = confirmation ?? '';
      confirmation = undefined;
      await run({
        role: 'user',
        parts: [
          { functionResponse: { id, name: 'adk_request_confirmation', response: { confirmed: approved } } },
        ],
      });
      return model.requests[0] ?? '';
    },
    // The ADK session's events, as its session service keeps them.
    stored: sessionText,
    async close() {},
  };
}

describeBridgeConformance('adk', driver, bridgeConformanceOptions);
