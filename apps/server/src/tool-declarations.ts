import {
  type AnyTool,
  type ExecutionMode,
  toAnthropicTool,
  toGeminiFunctionDeclaration,
  toMcpTool,
  toOpenAITool,
} from '@baton/contracts';

export type ToolFormat = 'openai' | 'anthropic' | 'gemini' | 'mcp';

/** The tools as one provider declares them (`GET /v1/tools?format=`). */
export function toolDeclarations(tools: readonly AnyTool[], format: ToolFormat, defaultMode: ExecutionMode) {
  switch (format) {
    case 'openai':
      return tools.map(toOpenAITool);
    case 'anthropic':
      return tools.map(toAnthropicTool);
    case 'gemini':
      return tools.map((tool) => toGeminiFunctionDeclaration(tool, { defaultMode }));
    case 'mcp':
      return tools.map((tool) => toMcpTool(tool, { defaultMode }));
  }
}
