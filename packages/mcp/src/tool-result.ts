import type { CallRecord, CallReply } from '@baton/contracts';
import { type CallToolResult, isCallToolResult } from '@modelcontextprotocol/server';

function text(value: unknown): string {
  return typeof value === 'string' ? value : JSON.stringify(value ?? null);
}

/** An ended call as its record or its reply tells of it. */
export type EndedCall = Pick<CallRecord, 'output' | 'images'> & {
  status: CallRecord['status'] | CallReply['status'];
  error?: { message: string } | undefined;
};

/** What the model sees of an ended call, as MCP content: a failure is a result with `isError`. */
export function toolResultOf(record: EndedCall): CallToolResult {
  if (record.status !== 'succeeded') {
    const message = record.error?.message ?? `The tool call ended ${record.status}.`;
    return { isError: true, content: [{ type: 'text', text: message }] };
  }
  const { output } = record;
  // A tool that returns MCP content (audio, resources, several blocks) has it passed on as it is.
  if (
    typeof output === 'object' &&
    output !== null &&
    Array.isArray((output as { content?: unknown }).content) &&
    isCallToolResult(output)
  ) {
    return output;
  }
  const images = (record.images ?? []).map((image) => ({
    type: 'image' as const,
    data: image.base64,
    mimeType: image.mediaType,
  }));
  const structured =
    typeof output === 'object' && output !== null && !Array.isArray(output)
      ? { structuredContent: output as Record<string, unknown> }
      : {};
  return { content: [{ type: 'text', text: text(output) }, ...images], ...structured };
}
