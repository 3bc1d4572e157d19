import { BaseChatModel } from '@langchain/core/language_models/chat_models';
import { AIMessage, type BaseMessage } from '@langchain/core/messages';
import type { ChatResult } from '@langchain/core/outputs';

/**
 * A chat model of LangChain's own kind (`BaseChatModel`), scripted reply by reply: it keeps every
 * list of messages it was given, and takes any tools it is bound to.
 */
export class ScriptedChatModel extends BaseChatModel {
  readonly requests: BaseMessage[][] = [];
  constructor(private readonly script: AIMessage[]) {
    super({});
  }
  _llmType(): string {
    return 'scripted';
  }
  override bindTools(): this {
    return this;
  }
  async _generate(messages: BaseMessage[]): Promise<ChatResult> {
    this.requests.push(messages);
    const message = this.script.shift() ?? new AIMessage('(no more script)');
    return { generations: [{ message, text: typeof message.content === 'string' ? message.content : '' }] };
  }
}
