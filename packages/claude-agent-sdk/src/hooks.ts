import type { HookCallbackMatcher, HookEvent, HookJSONOutput } from '@anthropic-ai/claude-agent-sdk';
import { notificationText } from '@baton/contracts';
import type { Runtime } from '@baton/runtime';
import { pullDelivery } from '@baton/runtime/bridge';

export interface BatonHooksOptions {
  /** The Baton session of the conversation, as given to `batonMcpServer`. */
  sessionId: string;
}

/**
 * The SDK hooks that bring the session's background results to the model, each once, by the
 * result scheduling, for `query({ options: { hooks } })`:
 * - `UserPromptSubmit`: at a turn's start, all of them, as context added to the user's prompt
 *   (they came first);
 * - `PostToolUse`: during a turn, after each tool's result, `interrupt` and `silent` ones.
 * Each is acknowledged at the next hook (`PostToolUse`, `Stop`, or the next turn's
 * `UserPromptSubmit`): Claude Code has written it into the session's transcript by then, so a
 * resumed session has it even when the request that was given it failed. One given in a process
 * that died before is given again at the next turn. A result that comes while the user is idle starts a turn of its
 * own: `idleTurns` (`@baton/runtime/bridge`) tells of it, and any prompt (or `RESULT_TURN_PROMPT`) brings
 * it in.
 */
export function batonHooks(
  runtime: Pick<Runtime, 'notifications'>,
  { sessionId }: BatonHooksOptions,
): Partial<Record<HookEvent, HookCallbackMatcher[]>> {
  const delivery = pullDelivery(runtime, { sessionId });
  const adding =
    (hookEventName: 'UserPromptSubmit' | 'PostToolUse', idle: boolean) =>
    async (): Promise<HookJSONOutput> => {
      // Claude Code writes a hook's context into the session's transcript before its request: by
      // the next hook, what the last one gave is in the conversation, whether that request
      // answered or failed (a resumed session has it).
      await delivery.confirm();
      const due = await delivery.take({ idle });
      return due.length === 0
        ? {}
        : {
            hookSpecificOutput: { hookEventName, additionalContext: due.map(notificationText).join('\n\n') },
          };
    };
  return {
    UserPromptSubmit: [{ hooks: [adding('UserPromptSubmit', true)] }],
    PostToolUse: [{ hooks: [adding('PostToolUse', false)] }],
    Stop: [
      {
        hooks: [
          async (): Promise<HookJSONOutput> => {
            await delivery.confirm();
            return {};
          },
        ],
      },
    ],
  };
}

/** The prompt of a turn that a result starts alone, the user having said nothing. */
export const RESULT_TURN_PROMPT = 'A background task finished; tell the user what came of it.';
