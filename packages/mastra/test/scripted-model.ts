import { MockLanguageModelV3 } from 'ai/test';

/** What the model answers to one request: text, or a tool call. */
export type ScriptedAnswer =
  | { text: string }
  | { toolCallId: string; toolName: string; input: Record<string, unknown> };

export const say = (text: string): ScriptedAnswer => ({ text });
export const callTool = (
  toolCallId: string,
  toolName: string,
  input: Record<string, unknown>,
): ScriptedAnswer => ({
  toolCallId,
  toolName,
  input,
});

const USAGE = {
  inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: 1, text: 1, reasoning: 0 },
};

/** The prompt of one request, as the model was given it. */
export type Prompt = Parameters<MockLanguageModelV3['doGenerate']>[0]['prompt'];

/**
 * The AI SDK's mock model (Mastra runs AI SDK models), playing a script: each request answered
 * with the next answer, and every prompt kept as it was sent.
 */
export function scriptedModel(script: ScriptedAnswer[]): { model: MockLanguageModelV3; prompts: Prompt[] } {
  const prompts: Prompt[] = [];
  const answers = [...script];
  const model = new MockLanguageModelV3({
    doGenerate: async ({ prompt }) => {
      prompts.push(structuredClone(prompt));
      const answer = answers.shift();
      if (answer === undefined) throw new Error('the script has no answer left for this request');
      if ('text' in answer)
        return {
          content: [{ type: 'text', text: answer.text }],
          finishReason: { unified: 'stop', raw: undefined },
          usage: USAGE,
          warnings: [],
        };
      return {
        content: [{ type: 'tool-call', ...answer, input: JSON.stringify(answer.input) }],
        finishReason: { unified: 'tool-calls', raw: undefined },
        usage: USAGE,
        warnings: [],
      };
    },
  });
  return { model, prompts };
}

/** A prompt's text (its messages, system aside), for looking into. */
export const shown = (prompt: Prompt | undefined): string =>
  JSON.stringify((prompt ?? []).filter((m) => m.role !== 'system'));

/** The tool results of a prompt, in order. */
export const toolResultsIn = (prompt: Prompt | undefined) =>
  (prompt ?? []).flatMap((message) =>
    message.role === 'tool' ? message.content.filter((part) => part.type === 'tool-result') : [],
  );
