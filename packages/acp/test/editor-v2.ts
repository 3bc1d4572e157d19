import {
  type AgentContext,
  agent,
  client,
  ndJsonStream,
  PROTOCOL_VERSION,
  type SessionUpdate,
} from '@agentclientprotocol/sdk/experimental/v2';
import type { Runtime } from '@baton/runtime';
import { type BatonAcpSession, batonAcpSession } from '../src/index.js';
import type { ScriptedTurn } from './editor.js';

/**
 * A coding agent of ACP v2 on the SDK's own `experimental/v2` apps: `session/prompt` is answered
 * once the prompt is accepted, and the turn is reported with `state_update` (running, then idle);
 * the model is scripted as in `editor.ts`. The agent says what came back from the background.
 */
export function scriptedAgentV2(runtime: Runtime) {
  const sessions = new Map<string, BatonAcpSession>();
  let made = 0;
  const say = (context: AgentContext, sessionId: string, text: string) =>
    context.notify('session/update', {
      sessionId,
      update: {
        sessionUpdate: 'agent_message',
        messageId: crypto.randomUUID(),
        content: [{ type: 'text', text }],
      },
    });
  const open = (sessionId: string, context: AgentContext) => {
    sessions.set(
      sessionId,
      batonAcpSession(runtime, {
        protocol: 2,
        client: context,
        sessionId,
        onResults: async (given) => {
          for (const result of given) await say(context, sessionId, `back: ${result.text}`);
        },
      }),
    );
  };
  const turn = async (context: AgentContext, sessionId: string, scripted: ScriptedTurn) => {
    const session = sessions.get(sessionId) as BatonAcpSession;
    await session.startTurn();
    try {
      if (scripted.call !== undefined) {
        const { text } = await session.runTool({
          toolCallId: scripted.call.id,
          name: scripted.call.tool,
          args: scripted.call.args,
        });
        await say(context, sessionId, `told: ${text}`);
      }
    } finally {
      await session.endTurn();
    }
  };
  return agent({ name: 'scripted-agent-v2' })
    .onRequest('initialize', () => ({
      protocolVersion: PROTOCOL_VERSION,
      info: { name: 'scripted-agent-v2', version: '1.0.0' },
    }))
    .onRequest('session/new', ({ client: context }) => {
      const sessionId = `session-${++made}`;
      open(sessionId, context);
      return { sessionId };
    })
    .onRequest('session/resume', ({ params, client: context }) => {
      open(params.sessionId, context);
      return {};
    })
    .onRequest('session/prompt', async ({ params, client: context }) => {
      const messageId = crypto.randomUUID();
      await context.notify('session/update', {
        sessionId: params.sessionId,
        update: { sessionUpdate: 'user_message', messageId, content: params.prompt },
      });
      const block = params.prompt[0] as { type: string; text?: unknown } | undefined;
      const scripted = JSON.parse(typeof block?.text === 'string' ? block.text : '{}') as ScriptedTurn;
      // v2: the prompt is answered once accepted; the turn is reported by its states.
      void turn(context, params.sessionId, scripted);
      return { messageId };
    })
    .onRequest('tool_call/cancel', async ({ params }) => {
      await sessions.get(params.sessionId)?.cancelToolCall(params.toolCallId);
      return {};
    });
}

/** What a test sees of an editor of ACP v2. */
export interface EditorV2 {
  /** Every `session/update` it was sent, in order. */
  updates: { sessionUpdate: string }[];
  /** Its session states, with the background work each listed. */
  states(): { state: string; background: string[] }[];
  newSession(): Promise<string>;
  resume(sessionId: string): Promise<void>;
  prompt(sessionId: string, scripted: ScriptedTurn): Promise<void>;
  cancelToolCall(sessionId: string, toolCallId: string): Promise<void>;
  said(): string[];
  reportsOf(toolCallId: string): { status?: string | null; rawOutput?: unknown; title?: string | null }[];
  close(): void;
}

/** An editor of ACP v2 on the SDK's own `client()` app, over an in-memory stream: it keeps every update. */
export async function editorV2Of(agentApp: ReturnType<typeof scriptedAgentV2>): Promise<EditorV2> {
  const toAgent = new TransformStream<Uint8Array, Uint8Array>();
  const toEditor = new TransformStream<Uint8Array, Uint8Array>();
  const updates: SessionUpdate[] = [];
  const agentConnection = agentApp.connect(ndJsonStream(toEditor.writable, toAgent.readable));
  const editor = client({ name: 'editor-v2' })
    .onNotification('session/update', ({ params }) => {
      updates.push(params.update);
    })
    .connect(ndJsonStream(toAgent.writable, toEditor.readable));
  await editor.agent.request('initialize', {
    protocolVersion: PROTOCOL_VERSION,
    info: { name: 'editor-v2', version: '1.0.0' },
  });
  const states = () =>
    updates.flatMap((update) =>
      update.sessionUpdate === 'state_update' && 'state' in update
        ? [
            {
              state: String(update.state),
              background: ((update as { background?: { toolCallId: string }[] }).background ?? []).map(
                (work) => work.toolCallId,
              ),
            },
          ]
        : [],
    );
  return {
    updates,
    states,
    newSession: async () => (await editor.agent.request('session/new', { cwd: '/work' })).sessionId,
    resume: async (sessionId: string): Promise<void> => {
      await editor.agent.request('session/resume', { sessionId, cwd: '/work' });
    },
    /** Sends a prompt, and resolves once the turn it started is idle again. */
    prompt: async (sessionId: string, scripted: ScriptedTurn) => {
      const idleBefore = states().filter((each) => each.state === 'idle').length;
      await editor.agent.request('session/prompt', {
        sessionId,
        prompt: [{ type: 'text', text: JSON.stringify(scripted) }],
      });
      const deadline = Date.now() + 10_000;
      while (states().filter((each) => each.state === 'idle').length === idleBefore) {
        if (Date.now() > deadline) throw new Error('the turn did not end');
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
    },
    cancelToolCall: async (sessionId: string, toolCallId: string): Promise<void> => {
      await editor.agent.request('tool_call/cancel', { sessionId, toolCallId });
    },
    said: () =>
      updates.flatMap((update) =>
        update.sessionUpdate === 'agent_message'
          ? ((update as { content?: { type: string; text?: string }[] }).content ?? []).flatMap((block) =>
              block.type === 'text' && block.text !== undefined ? [block.text] : [],
            )
          : [],
      ),
    reportsOf: (toolCallId: string) =>
      updates.filter(
        (update) =>
          update.sessionUpdate === 'tool_call_update' &&
          (update as { toolCallId?: string }).toolCallId === toolCallId,
      ) as { status?: string | null; rawOutput?: unknown; title?: string | null }[],
    close: () => {
      editor.close();
      agentConnection.close();
    },
  };
}
