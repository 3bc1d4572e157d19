import type { HookCallbackMatcher, HookEvent, HookJSONOutput } from '@anthropic-ai/claude-agent-sdk';
import { notificationText } from '@baton/contracts';
import type { Runtime } from '@baton/runtime';

export interface BatonHooksOptions {
  /** The Baton session of the conversation, as given to `batonMcpServer`. */
  sessionId: string;
}

/** The session's due results as the text a hook adds to the model's context; undefined for none. */
async function dueText(runtime: Pick<Runtime, 'notifications'>, sessionId: string, idle: boolean) {
  const due = await runtime.notifications.take({ sessionId, idle });
  return due.length === 0 ? undefined : due.map(notificationText).join('\n\n');
}

/**
 * The SDK hooks that bring the session's background results to the model, each once (it is
 * acknowledged as it is taken), by the result scheduling, for `query({ options: { hooks } })`:
 * - `UserPromptSubmit`: at a turn's start, `when_idle` and `interrupt` results, as context added
 *   to the user's prompt (they came first);
 * - `PostToolUse`: during a turn, after each tool's result, `interrupt` ones.
 * `silent` results are never given. A result that comes while the user is idle starts a turn of
 * its own: `runtime.notifications.watch` tells of it, and any prompt (or `RESULT_TURN_PROMPT`)
 * brings it in.
 */
export function batonHooks(
  runtime: Pick<Runtime, 'notifications'>,
  { sessionId }: BatonHooksOptions,
): Partial<Record<HookEvent, HookCallbackMatcher[]>> {
  const adding =
    (hookEventName: 'UserPromptSubmit' | 'PostToolUse', idle: boolean) =>
    async (): Promise<HookJSONOutput> => {
      const additionalContext = await dueText(runtime, sessionId, idle);
      return additionalContext === undefined
        ? {}
        : { hookSpecificOutput: { hookEventName, additionalContext } };
    };
  return {
    UserPromptSubmit: [{ hooks: [adding('UserPromptSubmit', true)] }],
    PostToolUse: [{ hooks: [adding('PostToolUse', false)] }],
  };
}

/** The prompt of a turn that a result starts alone, the user having said nothing. */
export const RESULT_TURN_PROMPT = 'A background task finished; tell the user what came of it.';
