import {
  type AgentOutputItem,
  type Model,
  type ModelRequest,
  type ModelResponse,
  Usage,
} from '@openai/agents';

/** What a scripted model does next: call a tool, or say something and stop. */
export type Move = { call: string; args: Record<string, unknown> } | { say: string };

/**
 * An OpenAI Agents model that follows a script: given the last tool result it was shown (as
 * JSON text; '' at the start), `next` says its move. It keeps what it was shown and what it called.
 */
export class ScriptedModel implements Model {
  readonly shown: string[] = [];
  readonly called: string[] = [];

  constructor(private readonly next: (lastShown: string) => Move) {}

  async getResponse(request: ModelRequest): Promise<ModelResponse> {
    const items = Array.isArray(request.input) ? request.input : [];
    const last = items.at(-1);
    const shown = last?.type === 'function_call_result' ? JSON.stringify(last.output) : '';
    if (shown !== '') this.shown.push(shown);
    const move = this.next(shown);
    const output: AgentOutputItem =
      'call' in move
        ? {
            type: 'function_call',
            callId: `call-${this.called.push(move.call)}`,
            name: move.call,
            arguments: JSON.stringify(move.args),
            status: 'completed',
          }
        : {
            type: 'message',
            role: 'assistant',
            status: 'completed',
            content: [{ type: 'output_text', text: move.say }],
          };
    return { usage: new Usage(), output: [output] };
  }

  // biome-ignore lint/correctness/useYield: the loops under test never stream.
  async *getStreamedResponse(): AsyncIterable<never> {
    throw new Error('the scripted model does not stream');
  }
}
