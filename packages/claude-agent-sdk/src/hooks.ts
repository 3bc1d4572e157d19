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
 * Each is acknowledged once the model has answered after it (the next `PostToolUse`, or `Stop`
 * at the turn's end); one given to a turn that did not finish, or in a process that died first,
 * is given again at the next turn. A result that comes while the user is idle starts a turn of its
 * own: `runtime.notifications.watch` tells of it, and any prompt (or `RESULT_TURN_PROMPT`) brings
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
      // A new turn gives again what a turn that did not finish was given; a tool's result means
      // the model answered after what it was given before.
      if (idle) await delivery.release();
      else await delivery.confirm();
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
