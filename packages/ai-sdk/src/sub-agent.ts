import {
  type AnyTool,
  defineTool,
  type ExecutionOptions,
  type InferSchemaOutput,
  ToolError,
  type ToolSchema,
} from '@baton/contracts';
import { generateText, type LanguageModel, type ModelMessage, stepCountIs, type ToolSet } from 'ai';

/** A sub-agent stops after this many turns unless told otherwise. */
export const DEFAULT_SUB_AGENT_TURNS = 20;

export interface SubAgentToolOptions<I extends ToolSchema> {
  name: string;
  description: string;
  /** What the caller's model gives the sub-agent (its task). */
  input: I;
  /** The sub-agent's first user message, made from its input. */
  prompt: (args: InferSchemaOutput<I>) => string;
  model: LanguageModel;
  system?: string;
  /** The sub-agent's own tools, which the AI SDK runs within its turns. */
  tools?: ToolSet;
  maxTurns?: number;
  /** Default: `background` and `idempotent` (its turns are durable steps). */
  execution?: ExecutionOptions;
}

/** One model turn of a sub-agent, as its durable step keeps it: what it was given and what it answered. */
interface Turn {
  /** The steering messages that entered the conversation before the turn. */
  entered: ModelMessage[];
  response: ModelMessage[];
  text: string;
  finished: boolean;
}

/**
 * A Baton tool of an AI SDK agent loop: a sub-agent in the background. Each model turn (with the
 * tool calls the AI SDK runs in it) is a durable step, so a run after a crash rebuilds the
 * conversation from the stored turns and goes on after the last finished one, never asking the
 * model again for one it answered. Steering messages (`steer_background`, `runtime.steer`) enter
 * the conversation as user messages before the next turn; the text of each turn that calls tools
 * is an update for the caller's model; each turn is logged (the call's output, its transcript);
 * a cancel aborts the turn under way. Its result is the text of the turn that calls no tool.
 */
export function subAgentTool<const I extends ToolSchema>(options: SubAgentToolOptions<I>): AnyTool {
  const { model, system, tools, maxTurns = DEFAULT_SUB_AGENT_TURNS } = options;
  return defineTool({
    name: options.name,
    description: options.description,
    input: options.input,
    messages: { type: 'string', minLength: 1 },
    execution: { mode: 'background', idempotent: true, ...options.execution },
    async execute(args, ctx) {
      const conversation: ModelMessage[] = [
        { role: 'user', content: options.prompt(args as InferSchemaOutput<I>) },
      ];
      for (let turn = 1; turn <= maxTurns; turn++) {
        const done = await ctx.step(`turn-${turn}`, async (): Promise<Turn> => {
          const entered = (await ctx.takeMessages()).map(
            (text): ModelMessage => ({ role: 'user', content: String(text) }),
          );
          const result = await generateText({
            model,
            ...(system !== undefined ? { system } : {}),
            ...(tools !== undefined ? { tools } : {}),
            messages: [...conversation, ...entered],
            stopWhen: stepCountIs(1),
            abortSignal: ctx.signal,
          });
          const finished = result.finishReason !== 'tool-calls';
          const taken: Turn = { entered, response: result.response.messages, text: result.text, finished };
          // Within the step: a turn taken again from the store is not logged or told twice.
          ctx.log('stdout', transcriptOf(turn, taken));
          if (!finished && taken.text !== '') ctx.update(taken.text);
          return taken;
        });
        conversation.push(...done.entered, ...done.response);
        if (done.finished) return done.text;
      }
      throw new ToolError(`The sub-agent "${options.name}" did not finish within ${maxTurns} turns.`);
    },
  }) as AnyTool;
}

/** A turn as the call's log shows it: the messages that entered, what the model said, the tools it called. */
function transcriptOf(turn: number, { entered, response }: Turn): string {
  const lines = [`turn ${turn}`];
  for (const message of entered) lines.push(`  user: ${String(message.content)}`);
  for (const message of response) {
    const parts =
      typeof message.content === 'string' ? [{ type: 'text', text: message.content }] : message.content;
    for (const part of parts as Array<Record<string, unknown>>) {
      if (part.type === 'text') lines.push(`  ${message.role}: ${String(part.text)}`);
      else if (part.type === 'tool-call')
        lines.push(`  calls ${String(part.toolName)}(${JSON.stringify(part.input)})`);
      else if (part.type === 'tool-result')
        lines.push(`  ${String(part.toolName)} gave ${JSON.stringify(part.output)}`);
    }
  }
  return `${lines.join('\n')}\n`;
}
