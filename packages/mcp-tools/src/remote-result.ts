import { ToolError } from '@baton/contracts';
import {
  resultFromTaskOutcome,
  TaskCancelledError,
  TaskFailedError,
  type TaskOutcome,
} from '@modelcontextprotocol/ext-tasks/client';

/** The parts of a `CallToolResult` (either generation) Baton reads. */
interface RemoteCallResult {
  content?: ReadonlyArray<{ type: string; text?: string }>;
  structuredContent?: unknown;
  isError?: boolean;
}

const textOf = (result: RemoteCallResult): string =>
  (result.content ?? [])
    .filter((block) => block.type === 'text')
    .map((block) => block.text ?? '')
    .join('\n');

/**
 * A remote tool's result as a Baton tool's value: its structured content when it has some, its
 * text when it is only text, the whole result otherwise (images and the like). A remote tool error
 * (`isError`), a failed task and a cancelled one are the tool's own errors: the model is shown them.
 */
function resultValue(result: RemoteCallResult): unknown {
  if (result.isError) throw new ToolError(textOf(result) || 'The remote tool failed.');
  if (result.structuredContent !== undefined) return result.structuredContent;
  const onlyText = (result.content ?? []).every((block) => block.type === 'text');
  return onlyText ? textOf(result) : result;
}

/** The value of a settled remote execution (see `resultValue`). */
export function valueOfOutcome(outcome: TaskOutcome<unknown>): unknown {
  try {
    return resultValue(resultFromTaskOutcome(outcome) as RemoteCallResult);
  } catch (error) {
    if (error instanceof TaskCancelledError) throw new ToolError('The remote task was cancelled.');
    if (error instanceof TaskFailedError) throw new ToolError(`The remote task failed: ${error.message}`);
    throw error;
  }
}
