import type { Runtime } from '@baton/runtime';
import type { BridgeConversation, BridgeDriver } from '@baton/runtime/bridge/testing';
import { describeBridgeConformance } from '@baton/runtime/bridge/testing';
import { whenStarted } from '@baton/runtime/testing';
import { bridgeConformanceOptions } from '@baton/test-support';
import { type FunctionResponse, GoogleGenAI, type LiveSendToolResponseParameters } from '@google/genai';
import { batonLive } from '../src/index.js';
import { fakeLiveServer } from './fake-live-server.js';

type Server = Awaited<ReturnType<typeof fakeLiveServer>>;

/**
 * A Live session of the SDK's own client on the local stand-in, with the bridge. What the model
 * has is what the server was sent, as a Live model takes it: an `INTERRUPT` or `SILENT` result at
 * once, a `WHEN_IDLE` one once its turn is over.
 */
async function conversationOf(
  runtime: Runtime,
  sessionId: string,
  server: Server,
): Promise<BridgeConversation> {
  const errors: unknown[] = [];
  const live = batonLive(runtime, { sessionId, onError: (error) => errors.push(error) });
  const ai = new GoogleGenAI({ apiKey: 'test-key', httpOptions: { baseUrl: server.url } });
  const session = await ai.live.connect({
    model: 'gemini-live-test',
    config: { tools: live.tools },
    callbacks: { onmessage: (message) => void live.onmessage(message), onclose: () => live.detach() },
  });
  let failing = false;
  let sent = 0;
  const isResult = (response: FunctionResponse) =>
    response.willContinue !== true && response.scheduling !== undefined;
  await live.attach({
    sendToolResponse: (params: LiveSendToolResponseParameters) => {
      const responses = [params.functionResponses ?? []].flat();
      if (failing && responses.some(isResult)) {
        failing = false;
        throw new Error('WebSocket is not open');
      }
      session.sendToolResponse(params);
      sent++;
    },
  });
  /** The results the model has; `WHEN_IDLE` ones sent mid-turn wait for its end. */
  let heldBack = 0;
  const had = async () => {
    await server.until(
      () =>
        (server.connections.at(-1)?.received.filter((m) => m.toolResponse).length ?? 0) >= sent || undefined,
    );
    const results = server.responses().filter(isResult);
    return JSON.stringify(results.slice(0, results.length - heldBack).map((response) => response.response));
  };
  const turnOver = async () => {
    heldBack = 0;
    server.send({ serverContent: { turnComplete: true } });
  };
  let closed = false;
  return {
    async turn(turn) {
      failing = turn.fails === true;
      const atStart = await had();
      const { call } = turn;
      let told: string | undefined;
      const before = server.responses().filter(isResult).length;
      if (call) {
        if (turn.cancels) {
          void whenStarted(runtime, call.callId).then(() =>
            server.send({ toolCallCancellation: { ids: [call.callId] } }),
          );
        }
        server.send({ toolCall: { functionCalls: [{ id: call.callId, name: call.tool, args: call.args }] } });
        if (!turn.cancels) {
          const [answer] = await server.until(() => {
            const answers = server.responses().filter((response) => response.id === call.callId);
            return answers.length > 0 ? answers : undefined;
          });
          told = JSON.stringify(answer?.response);
        }
      }
      await turn.between?.();
      // Mid-turn: what came WHEN_IDLE since the turn began waits for its end.
      await had();
      heldBack = server
        .responses()
        .filter(isResult)
        .slice(before)
        .filter((response) => response.scheduling === 'WHEN_IDLE').length;
      const afterCall = await had();
      await turnOver();
      return { atStart, ...(call ? { afterCall } : {}), ...(told ? { told } : {}) };
    },
    // What the live session was sent, as the model has it.
    stored: had,
    async close() {
      if (closed) return;
      closed = true;
      live.close();
      session.close();
    },
  };
}

let server: Server | undefined;
const driver: BridgeDriver = {
  delivery: 'push',
  // The Live API has no confirmation step: such a call is acknowledged and waits.
  approvals: 'acknowledged',
  async open(runtime, sessionId) {
    await server?.close();
    server = await fakeLiveServer();
    return conversationOf(runtime, sessionId, server);
  },
  // The session taken up again by a new process: the same endpoint, what it was sent kept.
  reopen: async (runtime, sessionId) =>
    conversationOf(runtime, sessionId, server ?? (await fakeLiveServer())),
};

describeBridgeConformance('gemini (Live)', driver, bridgeConformanceOptions);
