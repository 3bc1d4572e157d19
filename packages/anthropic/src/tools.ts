import type Anthropic from '@anthropic-ai/sdk';
import { replyText, toAnthropicTool } from '@baton/contracts';
import type { Runtime } from '@baton/runtime';
import { bridgeCall } from '@baton/runtime/bridge';

export interface BatonToolUseOptions {
  /** The Baton session of the conversation: its background results come back to it. */
  sessionId: string;
  /** Aborting it cancels the calls that have not answered yet. */
  signal?: AbortSignal;
}

/** A runtime's tools as the Messages API declares them (`tools` of `messages.create`). */
export function anthropicTools(runtime: Runtime): Anthropic.Messages.Tool[] {
  return runtime.tools.definitions().map((tool) => toAnthropicTool(tool) as Anthropic.Messages.Tool);
}

/** Only what is read of a message: its content blocks (a `Message` or a `BetaMessage`). */
export interface MessageWithToolUses {
  content: ReadonlyArray<{ type: string; id?: string; name?: string; input?: unknown }>;
}

/**
 * Runs the `tool_use` blocks of an assistant message as Baton calls, all at once, and answers each
 * with its `tool_result` block, in the order of the blocks. The block's id is the call's id, so a
 * message handled twice is the same calls. A call past its inline budget is answered with the
 * runtime's acknowledgement (the background continuation) and goes on; a failed one with its error, `is_error` set.
 */
export function handleToolUses(
  runtime: Runtime,
  message: MessageWithToolUses,
  { sessionId, signal }: BatonToolUseOptions,
): Promise<Anthropic.Messages.ToolResultBlockParam[]> {
  const uses = message.content.filter((block) => block.type === 'tool_use');
  return Promise.all(
    uses.map(async (use) => {
      const callId = use.id ?? '';
      const reply = await bridgeCall(runtime, {
        name: use.name ?? '',
        args: use.input,
        sessionId,
        callId,
        signal,
      });
      const { text, isError } = replyText(reply);
      const block: Anthropic.Messages.ToolResultBlockParam = {
        type: 'tool_result',
        tool_use_id: callId,
        content: text,
      };
      if (isError) block.is_error = true;
      return block;
    }),
  );
}
