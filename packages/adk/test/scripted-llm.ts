import { BaseLlm, type LlmRequest, type LlmResponse } from '@google/adk';

/** What the model answers: a content of the model's, in order, one per request. */
export type ScriptedAnswer = NonNullable<LlmResponse['content']>;

/** The model's answer that calls a function, with the id the model gives it. */
export const callFunction = (id: string, name: string, args: Record<string, unknown>): ScriptedAnswer => ({
  role: 'model',
  parts: [{ functionCall: { id, name, args } }],
});

export const say = (text: string): ScriptedAnswer => ({ role: 'model', parts: [{ text }] });

/**
 * ADK's model interface played from a script, as the ADK docs suggest for tests (a `BaseLlm` of
 * one's own): each request answered with the next content, and every request kept as it was sent.
 */
export class ScriptedLlm extends BaseLlm {
  readonly requests: NonNullable<LlmRequest['contents']>[] = [];
  readonly #script: ScriptedAnswer[];

  constructor(script: ScriptedAnswer[]) {
    super({ model: 'scripted' });
    this.#script = [...script];
  }

  override async *generateContentAsync(request: LlmRequest): AsyncGenerator<LlmResponse, void> {
    this.requests.push(structuredClone(request.contents));
    const content = this.#script.shift();
    if (content === undefined) throw new Error('the script has no answer left for this request');
    yield { content, turnComplete: true };
  }

  override async connect(): Promise<never> {
    throw new Error('the scripted model has no live connection');
  }
}
