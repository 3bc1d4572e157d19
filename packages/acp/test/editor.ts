import {
  type AgentContext,
  agent,
  client,
  ndJsonStream,
  PROTOCOL_VERSION,
  type RequestPermissionRequest,
  type RequestPermissionResponse,
  type SessionUpdate,
} from '@agentclientprotocol/sdk';
import type { Runtime } from '@baton/runtime';
import { type AcpResult, type BatonAcpSession, batonAcpSession, type ResultsWhen } from '../src/index.js';

/** What the model asks for in a prompt of the tests: one tool call, or none. */
export interface ScriptedTurn {
  call?: { tool: string; args: unknown; id: string };
}

/**
 * A coding agent on the SDK's own `agent()` app, whose model is scripted: a prompt's text is a
 * `ScriptedTurn` as JSON. At a turn's start it says what came back from the background; it says
 * what it was told of its call; with `when_idle`, a result that comes back while the session is
 * idle has it say so in a report of its own.
 */
export function scriptedAgent(runtime: Runtime, results: ResultsWhen) {
  const sessions = new Map<string, BatonAcpSession>();
  let made = 0;
  const open = (sessionId: string, context: AgentContext) => {
    const say = (text: string) =>
      context.notify('session/update', {
        sessionId,
        update: { sessionUpdate: 'agent_message_chunk', content: { type: 'text', text } },
      });
    const session = batonAcpSession(runtime, {
      client: context,
      sessionId,
      results,
      onResults: async (given: readonly AcpResult[]) => {
        for (const result of given) await say(`back: ${result.text}`);
      },
    });
    sessions.set(sessionId, session);
  };
  return agent({ name: 'scripted-agent' })
    .onRequest('initialize', () => ({
      protocolVersion: PROTOCOL_VERSION,
      agentCapabilities: { loadSession: true },
    }))
    .onRequest('session/new', ({ client: context }) => {
      const sessionId = `session-${++made}`;
      open(sessionId, context);
      return { sessionId };
    })
    .onRequest('session/load', ({ params, client: context }) => {
      open(params.sessionId, context);
      return {};
    })
    .onRequest('session/prompt', async ({ params, client: context }) => {
      const session = sessions.get(params.sessionId);
      if (session === undefined) throw new Error(`no session ${params.sessionId}`);
      const say = (text: string) =>
        context.notify('session/update', {
          sessionId: params.sessionId,
          update: { sessionUpdate: 'agent_message_chunk', content: { type: 'text', text } },
        });
      const block = params.prompt[0];
      const turn = JSON.parse(block?.type === 'text' ? block.text : '{}') as ScriptedTurn;
      let cancelled = false;
      try {
        for (const result of await session.startTurn()) await say(`back: ${result.text}`);
        if (turn.call !== undefined) {
          const { text, reply } = await session.runTool({
            toolCallId: turn.call.id,
            name: turn.call.tool,
            args: turn.call.args,
          });
          cancelled = reply.status === 'cancelled';
          await say(`told: ${text}`);
        }
      } finally {
        await session.endTurn();
      }
      return { stopReason: cancelled ? 'cancelled' : 'end_turn' };
    })
    .onNotification('session/cancel', ({ params }) => {
      sessions.get(params.sessionId)?.cancelTurn();
    });
}

/** A pair of in-memory byte streams, each side's ACP stream of newline-delimited JSON. */
function memoryPipe() {
  const toAgent = new TransformStream<Uint8Array, Uint8Array>();
  const toEditor = new TransformStream<Uint8Array, Uint8Array>();
  return {
    agentSide: ndJsonStream(toEditor.writable, toAgent.readable),
    editorSide: ndJsonStream(toAgent.writable, toEditor.readable),
  };
}

export type PermissionAnswer = (
  request: RequestPermissionRequest,
  signal: AbortSignal,
) => Promise<RequestPermissionResponse>;

/**
 * An editor on the SDK's own `client()` app, connected to the agent over an in-memory stream: it
 * keeps every `session/update` it is sent, and answers permission requests with `answer`.
 */
export async function editorOf(agentApp: ReturnType<typeof scriptedAgent>, answer?: PermissionAnswer) {
  const { agentSide, editorSide } = memoryPipe();
  const updates: SessionUpdate[] = [];
  const asked: RequestPermissionRequest[] = [];
  const agentConnection = agentApp.connect(agentSide);
  const editor = client({ name: 'editor' })
    .onNotification('session/update', ({ params }) => {
      updates.push(params.update);
    })
    .onRequest('session/request_permission', ({ params, signal }) => {
      asked.push(params);
      if (answer === undefined) throw new Error('this editor asks no permission');
      return answer(params, signal);
    })
    .connect(editorSide);
  await editor.agent.request('initialize', { protocolVersion: PROTOCOL_VERSION, clientCapabilities: {} });
  const prompt = (sessionId: string, turn: ScriptedTurn) =>
    editor.agent.request('session/prompt', {
      sessionId,
      prompt: [{ type: 'text', text: JSON.stringify(turn) }],
    });
  return {
    updates,
    asked,
    agent: editor.agent,
    newSession: async () =>
      (await editor.agent.request('session/new', { cwd: '/work', mcpServers: [] })).sessionId,
    loadSession: (sessionId: string) =>
      editor.agent.request('session/load', { sessionId, cwd: '/work', mcpServers: [] }),
    prompt,
    cancel: (sessionId: string) => editor.agent.notify('session/cancel', { sessionId }),
    /** What the agent said, in order. */
    said: () =>
      updates.flatMap((update) =>
        update.sessionUpdate === 'agent_message_chunk' && update.content.type === 'text'
          ? [update.content.text]
          : [],
      ),
    /** The reports of one tool call, in order. */
    reportsOf: (toolCallId: string) =>
      updates.flatMap((update) =>
        (update.sessionUpdate === 'tool_call' || update.sessionUpdate === 'tool_call_update') &&
        update.toolCallId === toolCallId
          ? [update]
          : [],
      ),
    close: () => {
      editor.close();
      agentConnection.close();
    },
  };
}

/** The statuses one tool call was reported in, in order, with repeats merged. */
export function statusesOf(reports: readonly SessionUpdate[]): string[] {
  const statuses: string[] = [];
  for (const report of reports) {
    const status = 'status' in report ? report.status : undefined;
    if (typeof status === 'string' && statuses.at(-1) !== status) statuses.push(status);
  }
  return statuses;
}
