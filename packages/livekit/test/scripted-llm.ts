import { type APIConnectOptions, DEFAULT_API_CONNECT_OPTIONS, llm } from '@livekit/agents';

/** What the model answers to one request: words, or a function call (its id given). */
export type ScriptedAnswer =
  | { text: string }
  | { callId: string; name: string; args: Record<string, unknown> };

export const say = (text: string): ScriptedAnswer => ({ text });
export const callTool = (callId: string, name: string, args: Record<string, unknown>): ScriptedAnswer => ({
  callId,
  name,
  args,
});

class ScriptedStream extends llm.LLMStream {
  readonly #answer: ScriptedAnswer | undefined;

  constructor(
    model: ScriptedLlm,
    chatCtx: llm.ChatContext,
    answer: ScriptedAnswer | undefined,
    connOptions: APIConnectOptions,
  ) {
    super(model, { chatCtx, connOptions });
    this.#answer = answer;
  }

  protected override async run(): Promise<void> {
    const answer = this.#answer;
    if (answer === undefined) return;
    if ('text' in answer) {
      this.queue.put({ id: 'scripted', delta: { role: 'assistant', content: answer.text } });
      return;
    }
    const call = llm.FunctionCall.create({
      callId: answer.callId,
      name: answer.name,
      args: JSON.stringify(answer.args),
    });
    this.queue.put({ id: 'scripted', delta: { role: 'assistant', toolCalls: [call] } });
  }
}

/**
 * LiveKit's model interface played from a script, as its own `FakeLLM` does (which answers by the
 * user's last words, and gives every call the same id): each request answered with the next
 * answer, and the chat context of every request kept, as text.
 */
export class ScriptedLlm extends llm.LLM {
  readonly requests: string[] = [];
  readonly #script: ScriptedAnswer[];

  constructor(script: ScriptedAnswer[]) {
    super();
    this.#script = [...script];
  }

  label(): string {
    return 'scripted';
  }

  chat({
    chatCtx,
    connOptions = DEFAULT_API_CONNECT_OPTIONS,
  }: Parameters<llm.LLM['chat']>[0]): llm.LLMStream {
    this.requests.push(JSON.stringify(chatCtx.toJSON()));
    return new ScriptedStream(this, chatCtx, this.#script.shift(), connOptions);
  }
}
