import { toGeminiFunctionDeclaration } from '@baton/contracts';
import type { Runtime } from '@baton/runtime';
import type { FunctionDeclaration, Tool } from '@google/genai';

/** The runtime as declarations read it: its tools, and the mode of those that name none. */
type Declaring = Pick<Runtime, 'tools'> & Partial<Pick<Runtime, 'defaultMode'>>;

/**
 * The runtime's tools as Gemini declares functions, for `generateContent` and for a Live session's
 * `config.tools`: a tool the runtime may answer before it ends (`auto` or `background`, by its own
 * mode or the runtime's `defaultMode`, or one that waits for approval) is `NON_BLOCKING`, so a Live
 * model keeps talking while it runs; Gemini takes `willContinue` only from those.
 */
export function geminiTools(runtime: Declaring): Tool[] {
  const options = runtime.defaultMode ? { defaultMode: runtime.defaultMode } : {};
  const functionDeclarations = runtime.tools
    .definitions()
    .map((tool) => toGeminiFunctionDeclaration(tool, options) as FunctionDeclaration);
  return [{ functionDeclarations }];
}

/** Whether the runtime declares `name` NON_BLOCKING (see `geminiTools`). */
export function isNonBlocking(runtime: Declaring, name: string): boolean {
  const tool = runtime.tools.get(name);
  const options = runtime.defaultMode ? { defaultMode: runtime.defaultMode } : {};
  return tool !== undefined && toGeminiFunctionDeclaration(tool, options).behavior === 'NON_BLOCKING';
}
