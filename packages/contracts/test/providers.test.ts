import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  defineTool,
  toAnthropicTool,
  toGeminiFunctionDeclaration,
  toMcpTool,
  toOpenAITool,
} from '../src/index.js';

const input = z.object({ query: z.string().describe('what to look for') });
const schema = {
  type: 'object',
  properties: { query: { type: 'string', description: 'what to look for' } },
  required: ['query'],
};

const tool = (mode?: 'inline' | 'auto' | 'background') =>
  defineTool({
    name: 'search_docs',
    title: 'Search the docs',
    description: 'Search the documentation',
    input,
    output: z.object({ hits: z.array(z.string()) }),
    execution: { ...(mode ? { mode } : {}), readOnly: true, idempotent: true },
    execute: () => ({ hits: [] }),
  });

describe('provider declarations from one contract', () => {
  it('OpenAI function tools', () => {
    expect(toOpenAITool(tool())).toEqual({
      type: 'function',
      function: { name: 'search_docs', description: 'Search the documentation', parameters: schema },
    });
  });

  it('Anthropic tools', () => {
    expect(toAnthropicTool(tool())).toEqual({
      name: 'search_docs',
      description: 'Search the documentation',
      input_schema: schema,
    });
  });

  it('Gemini function declarations: NON_BLOCKING only for tools that may run in the background', () => {
    expect(toGeminiFunctionDeclaration(tool('inline'))).toEqual({
      name: 'search_docs',
      description: 'Search the documentation',
      parametersJsonSchema: schema,
    });
    expect(toGeminiFunctionDeclaration(tool('auto')).behavior).toBe('NON_BLOCKING');
    expect(toGeminiFunctionDeclaration(tool('background')).behavior).toBe('NON_BLOCKING');
    expect(toGeminiFunctionDeclaration(tool(), { defaultMode: 'auto' }).behavior).toBe('NON_BLOCKING');
  });

  it('MCP tools with execution.taskSupport from the mode, annotations and output schema', () => {
    expect(toMcpTool(tool('inline'))).toEqual({
      name: 'search_docs',
      title: 'Search the docs',
      description: 'Search the documentation',
      inputSchema: schema,
      outputSchema: {
        type: 'object',
        properties: { hits: { type: 'array', items: { type: 'string' } } },
        required: ['hits'],
        additionalProperties: false,
      },
      annotations: { title: 'Search the docs', readOnlyHint: true, idempotentHint: true },
      execution: { taskSupport: 'forbidden' },
    });
    expect(toMcpTool(tool('auto')).execution.taskSupport).toBe('optional');
    expect(toMcpTool(tool('background')).execution.taskSupport).toBe('required');
  });

  it('passes a JSON Schema input through as it is', () => {
    const jsonTool = defineTool({ name: 'j', description: 'd', input: schema, execute: () => 1 });
    expect(toAnthropicTool(jsonTool).input_schema).toBe(schema);
  });
});
