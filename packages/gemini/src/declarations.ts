import { toGeminiFunctionDeclaration } from '@baton/contracts';
import type { Runtime } from '@baton/runtime';
import type { FunctionDeclaration, Tool } from '@google/genai';

/**
 * The runtime's tools as Gemini declares functions, for `generateContent` and for a Live session's
 * `config.tools`: a tool that may go to the background (`auto` or `background`) is `NON_BLOCKING`,
 * so a Live model keeps talking while it runs.
 */
export function geminiTools(runtime: Pick<Runtime, 'tools'>): Tool[] {
  const functionDeclarations = runtime.tools
    .definitions()
    .map((tool) => toGeminiFunctionDeclaration(tool) as FunctionDeclaration);
  return [{ functionDeclarations }];
}

/** Whether the runtime declares `name` NON_BLOCKING (see `geminiTools`). */
export function isNonBlocking(runtime: Pick<Runtime, 'tools'>, name: string): boolean {
  const tool = runtime.tools.get(name);
  return tool !== undefined && toGeminiFunctionDeclaration(tool).behavior === 'NON_BLOCKING';
}
