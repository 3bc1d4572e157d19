import type { AgentContext, PermissionOption, ToolCallUpdate } from '@agentclientprotocol/sdk';
import type { ApprovalDecision } from '@baton/runtime/bridge';

/** The choices a tool that needs approval offers: once, either way (Baton records each call's own). */
export const PERMISSION_OPTIONS: PermissionOption[] = [
  { optionId: 'allow', name: 'Allow', kind: 'allow_once' },
  { optionId: 'reject', name: 'Reject', kind: 'reject_once' },
];

/**
 * Asks the user through the client (`session/request_permission`) whether the call may run. A
 * prompt turn cancelled while it asks (the client answers `cancelled`) rejects it, with words the
 * model can act on.
 */
export async function askPermission(
  client: Pick<AgentContext, 'request'>,
  { sessionId, toolCall, signal }: { sessionId: string; toolCall: ToolCallUpdate; signal: AbortSignal },
): Promise<ApprovalDecision> {
  const { outcome } = await client.request(
    'session/request_permission',
    { sessionId, toolCall, options: PERMISSION_OPTIONS },
    { cancellationSignal: signal },
  );
  if (outcome.outcome === 'cancelled') return { approved: false, reason: 'the prompt turn was cancelled' };
  return outcome.optionId === 'allow'
    ? { approved: true }
    : { approved: false, reason: 'rejected by the user' };
}
