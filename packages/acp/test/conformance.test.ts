import { agent, PROTOCOL_VERSION } from '@agentclientprotocol/sdk';
import type { Runtime } from '@baton/runtime';
import type { BridgeConversation, BridgeDriver, BridgeTurn } from '@baton/runtime/bridge/testing';
import { describeBridgeConformance } from '@baton/runtime/bridge/testing';
import { whenStarted } from '@baton/runtime/testing';
import { bridgeConformanceOptions } from '@baton/test-support';
import { type BatonAcpSession, batonAcpSession } from '../src/index.js';
import { editorOf } from './editor.js';

/**
 * An ACP agent on the SDK's own `agent()` app, whose model is the suite's: a prompt's text is the
 * tool call to make, as JSON. Its conversation is what it says: `back: …` for each result the
 * session's delivery puts into it (results `when_idle`: they come while it is idle, and
 * `interrupt` ones mid-turn), and `told: …` for what its tool call answered.
 */
function deliveryAgent(
  runtime: Runtime,
  batonSessionId: string,
  play: { turn: BridgeTurn; failing: boolean },
) {
  const sessions = new Map<string, BatonAcpSession>();
  const transcript: string[] = [];
  return {
    transcript,
    app: agent({ name: 'delivery-agent' })
      .onRequest('initialize', () => ({ protocolVersion: PROTOCOL_VERSION, agentCapabilities: {} }))
      .onRequest('session/new', ({ client: context }) => {
        const sessionId = `acp-${sessions.size + 1}`;
        const say = (text: string) => {
          transcript.push(text);
          return context.notify('session/update', {
            sessionId,
            update: { sessionUpdate: 'agent_message_chunk', content: { type: 'text', text } },
          });
        };
        sessions.set(
          sessionId,
          batonAcpSession(runtime, {
            client: context,
            sessionId,
            batonSessionId,
            results: 'when_idle',
            onResults: async (given) => {
              if (play.failing) {
                play.failing = false;
                throw new Error('the editor went away under the send');
              }
              for (const result of given) await say(`back: ${result.text}`);
            },
            onError: () => {},
          }),
        );
        return { sessionId };
      })
      .onRequest('session/prompt', async ({ params, client: context }) => {
        const session = sessions.get(params.sessionId);
        if (session === undefined) throw new Error(`no session ${params.sessionId}`);
        const say = (text: string) => {
          transcript.push(text);
          return context.notify('session/update', {
            sessionId: params.sessionId,
            update: { sessionUpdate: 'agent_message_chunk', content: { type: 'text', text } },
          });
        };
        const { call } = play.turn;
        let cancelled = false;
        try {
          for (const result of await session.startTurn()) await say(`back: ${result.text}`);
          if (call !== undefined) {
            const { text, reply } = await session.runTool({
              toolCallId: call.callId,
              name: call.tool,
              args: call.args,
            });
            cancelled = reply.status === 'cancelled';
            await say(`told: ${text}`);
          }
          await play.turn.between?.();
        } finally {
          await session.endTurn();
        }
        return { stopReason: cancelled ? 'cancelled' : 'end_turn' };
      })
      .onNotification('session/cancel', ({ params }) => {
        sessions.get(params.sessionId)?.cancelTurn();
      }),
  };
}

const driver: BridgeDriver = {
  delivery: 'push',
  // The editor is asked (`session/request_permission`) before the call runs: it allows.
  approvals: 'permission',
  async open(runtime, sessionId): Promise<BridgeConversation> {
    const play = { turn: {} as BridgeTurn, failing: false };
    const { app, transcript } = deliveryAgent(runtime, sessionId, play);
    const editor = await editorOf(app, async () => ({ outcome: { outcome: 'selected', optionId: 'allow' } }));
    const acpSessionId = await editor.newSession();
    const said = () => transcript.join('\n');
    return {
      async turn(turn) {
        play.turn = turn;
        play.failing = turn.fails === true;
        const atStart = said();
        let told: string | undefined;
        let afterCall: string | undefined;
        const { call } = turn;
        if (call && turn.cancels) {
          void whenStarted(runtime, `${acpSessionId}/${call.callId}`).then(() => editor.cancel(acpSessionId));
        }
        const answered = call
          ? new Promise<void>((resolve) => {
              const between = turn.between;
              play.turn = {
                ...turn,
                between: async () => {
                  told = transcript.at(-1);
                  await between?.();
                  // Mid-turn, once `between` ran: what the session put in meanwhile.
                  afterCall = said();
                  resolve();
                },
              };
            })
          : Promise.resolve();
        await editor.prompt(acpSessionId, {});
        await answered;
        return { atStart, ...(afterCall !== undefined ? { afterCall } : {}), ...(told ? { told } : {}) };
      },
      stored: async () => said(),
      batonCallId: (callId) => `${acpSessionId}/${callId}`,
      async close() {
        editor.close();
      },
    };
  },
};

describeBridgeConformance('acp', driver, bridgeConformanceOptions);
