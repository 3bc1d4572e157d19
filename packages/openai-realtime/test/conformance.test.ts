import type { Runtime } from '@baton/runtime';
import type { BridgeConversation, BridgeDriver } from '@baton/runtime/bridge/testing';
import { describeBridgeConformance } from '@baton/runtime/bridge/testing';
import { whenStarted } from '@baton/runtime/testing';
import { bridgeConformanceOptions } from '@baton/test-support';
import { OpenAIRealtimeWebSocket, RealtimeAgent, RealtimeSession } from '@openai/agents-realtime';
import { batonRealtimeResults, batonRealtimeTools } from '../src/index.js';
import { type ClientEvent, fakeRealtimeServer, messagesOf, outputsOf } from './fake-realtime-server.js';

type Server = Awaited<ReturnType<typeof fakeRealtimeServer>>;
const answeredAfter = (callId: string) => (events: ClientEvent[]) => {
  const output = events.findIndex((event) => outputsOf([event]).some((each) => each.callId === callId));
  return output !== -1 && events.slice(output).some((event) => event.type === 'response.create')
    ? true
    : undefined;
};

/** A `RealtimeSession` of the SDK's own on a local stand-in for the Realtime endpoint, with the bridge's tools and results. */
async function conversationOf(
  runtime: Runtime,
  sessionId: string,
  server: Server,
): Promise<BridgeConversation> {
  const agent = new RealtimeAgent({
    name: 'voice',
    instructions: 'Answer by voice.',
    tools: batonRealtimeTools(runtime, { sessionId }),
  });
  const session = new RealtimeSession(agent, {
    transport: new OpenAIRealtimeWebSocket({ url: server.url }),
    model: 'gpt-realtime',
  });
  await session.connect({ apiKey: 'test-key' });
  // The next message put into the conversation fails to send (its socket closed under it), once.
  let failing = false;
  let sent = 0;
  const transport = session.transport as { sendMessage: (...args: unknown[]) => void };
  const send = transport.sendMessage.bind(transport);
  transport.sendMessage = (...args) => {
    if (failing) {
      failing = false;
      throw new Error('the socket closed under the send');
    }
    send(...args);
    sent++;
  };
  // A send made to fail is told here, as a bridge tells its application.
  const errors: unknown[] = [];
  const results = batonRealtimeResults(runtime, { sessionId, onError: (error) => errors.push(error) });
  await results.attach(session);
  /** What the model has: every message the server has received of those sent (a socket takes a moment). */
  const had = async () => {
    await server.until((events) => (messagesOf(events).length >= sent ? true : undefined));
    return messagesOf(server.received).join('\n');
  };
  let responses = 0;
  let closed = false;
  return {
    async turn(turn) {
      failing = turn.fails === true;
      const atStart = await had();
      const { call } = turn;
      let told: string | undefined;
      if (call) {
        // The model calls the tool in a response of its own, which ends; the SDK answers it.
        const id = `resp_call_${++responses}`;
        if (turn.cancels) {
          void whenStarted(runtime, call.callId).then(() => server.userSpeaks());
        }
        server.startResponse(id);
        server.callFunction(id, call.callId, call.tool, call.args);
        if (!turn.cancels) {
          told = (
            await server.until((events) => outputsOf(events).find((each) => each.callId === call.callId))
          ).output;
          server.endResponse(id);
          await server.until(answeredAfter(call.callId));
        } else {
          server.endResponse(id);
        }
      }
      // The model speaks on; a result may end while it does; then its turn ends.
      const speaking = `resp_speaking_${++responses}`;
      const heard = new Promise((resolve) => session.transport.once('turn_started', resolve));
      server.startResponse(speaking);
      await heard;
      await turn.between?.();
      const afterCall = await had();
      const done = new Promise((resolve) => session.transport.once('turn_done', resolve));
      server.endResponse(speaking);
      await done;
      return { atStart, ...(call ? { afterCall } : {}), ...(told ? { told } : {}) };
    },
    // What the live conversation was sent.
    stored: had,
    async close() {
      if (closed) return;
      closed = true;
      await results.close();
      session.close();
    },
  };
}

let server: Server | undefined;
const driver: BridgeDriver = {
  delivery: 'push',
  // Realtime has no confirmation step the bridge uses: such a call is acknowledged and waits.
  approvals: 'acknowledged',
  async open(runtime, sessionId) {
    await server?.close();
    server = await fakeRealtimeServer();
    return conversationOf(runtime, sessionId, server);
  },
  // The same conversation taken up again by a new process: the same endpoint, what it was given kept.
  reopen: async (runtime, sessionId) =>
    conversationOf(runtime, sessionId, server ?? (await fakeRealtimeServer())),
};

describeBridgeConformance('openai-realtime', driver, bridgeConformanceOptions);
