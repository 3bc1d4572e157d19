import type { AgentContext } from '@agentclientprotocol/sdk';
import type {
  AgentContext as AgentContextV2,
  SessionUpdate as SessionUpdateV2,
} from '@agentclientprotocol/sdk/experimental/v2';
import type { ApprovalDecision } from '@baton/runtime/bridge';
import { askPermission, PERMISSION_OPTIONS } from './permission.js';
import { BATON_META, type ToolCallReport } from './reports.js';

/** What a session says to its client, in the words of the client's protocol version. */
export interface AcpWire {
  readonly protocol: 1 | 2;
  send(report: ToolCallReport): Promise<void>;
  ask(
    request: { toolCallId: string; title: string; args: unknown },
    signal: AbortSignal,
  ): Promise<ApprovalDecision>;
  /**
   * ACP v2's session state, with the tool calls that go on in the background as its complete
   * snapshot (v1 has no such update: nothing is sent).
   */
  state(
    state: 'running' | 'idle',
    background: readonly string[],
    stopReason?: 'end_turn' | 'cancelled',
  ): Promise<void>;
}

/** ACP v1 (the SDK's default entry point): reports within turns, no session states. */
export function v1Wire(client: Pick<AgentContext, 'notify' | 'request'>, sessionId: string): AcpWire {
  return {
    protocol: 1,
    send: (update) => client.notify('session/update', { sessionId, update }),
    ask: ({ toolCallId, title, args }, signal) =>
      askPermission(client, {
        sessionId,
        toolCall: { toolCallId, title, status: 'pending', rawInput: args },
        signal,
      }),
    state: async () => {},
  };
}

type ToolCallUpdateV2 = Extract<SessionUpdateV2, { sessionUpdate: 'tool_call_update' }>;

/**
 * A report in ACP v2's words: every report is a `tool_call_update` (an upsert: the first one
 * announces the call), and a stopped call is `cancelled`, which v1 had no word for.
 */
export function v2UpdateOf(report: ToolCallReport): ToolCallUpdateV2 {
  const { sessionUpdate: _v1, ...fields } = report;
  const batonStatus = (report._meta?.[BATON_META] as { status?: string } | undefined)?.status;
  const status = batonStatus === 'cancelled' ? 'cancelled' : report.status;
  return { ...fields, sessionUpdate: 'tool_call_update', status } as ToolCallUpdateV2;
}

/**
 * ACP v2 (the SDK's `experimental/v2` entry point): reports at any time, the session's state
 * (`running`, `idle`) with its background work, permission asked about a tool call subject.
 */
export function v2Wire(client: Pick<AgentContextV2, 'notify' | 'request'>, sessionId: string): AcpWire {
  return {
    protocol: 2,
    send: (report) => client.notify('session/update', { sessionId, update: v2UpdateOf(report) }),
    async ask({ toolCallId, title, args }, signal) {
      const { outcome } = await client.request(
        'session/request_permission',
        {
          sessionId,
          title: `Allow ${title}?`,
          subject: { type: 'tool_call', toolCall: { toolCallId, title, status: 'pending', rawInput: args } },
          options: PERMISSION_OPTIONS,
        },
        { cancellationSignal: signal },
      );
      if (outcome.outcome === 'cancelled')
        return { approved: false, reason: 'the prompt turn was cancelled' };
      if (outcome.outcome === 'selected' && 'optionId' in outcome && outcome.optionId === 'allow')
        return { approved: true };
      return { approved: false, reason: 'rejected by the user' };
    },
    async state(state, background, stopReason) {
      const work = background.map((toolCallId) => ({ type: 'tool_call' as const, toolCallId }));
      const update: SessionUpdateV2 =
        state === 'running'
          ? { sessionUpdate: 'state_update', state: 'running', background: work }
          : stopReason === 'cancelled'
            ? { sessionUpdate: 'state_update', state: 'idle', background: work, stopReason: 'cancelled' }
            : stopReason === 'end_turn'
              ? { sessionUpdate: 'state_update', state: 'idle', background: work, stopReason: 'end_turn' }
              : { sessionUpdate: 'state_update', state: 'idle', background: work };
      await client.notify('session/update', { sessionId, update });
    },
  };
}
