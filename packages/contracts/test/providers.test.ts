import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  defineTool,
  type ToolSchema,
  toAnthropicTool,
  toGeminiFunctionDeclaration,
  toJsonSchema,
  toMcpTool,
  toOpenAIResponsesTool,
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

const withInput = (input: ToolSchema) =>
  defineTool({ name: 'search_docs', description: 'Search the documentation', input, execute: () => null });

describe('provider declarations from one contract', () => {
  it('OpenAI function tools', () => {
    expect(toOpenAITool(tool())).toEqual({
      type: 'function',
      function: {
        name: 'search_docs',
        description: 'Search the documentation',
        parameters: { ...schema, additionalProperties: false },
        strict: true,
      },
    });
  });

  it('Responses API / Agents SDK tools: strict, closed objects, when the schema allows', () => {
    expect(toOpenAIResponsesTool(tool())).toEqual({
      type: 'function',
      name: 'search_docs',
      description: 'Search the documentation',
      parameters: { ...schema, additionalProperties: false },
      strict: true,
    });
    // OpenAI's async tool calling, for exactly the tools the runtime may answer before they end.
    expect(toOpenAIResponsesTool(tool('auto')).async).toBe(true);
    expect(toOpenAIResponsesTool(tool('background')).async).toBe(true);
    expect(toOpenAIResponsesTool(tool(), { defaultMode: 'auto' }).async).toBe(true);
    expect(toOpenAIResponsesTool(tool('inline'))).not.toHaveProperty('async');
    const nested = z.object({
      filters: z.array(z.object({ field: z.string(), value: z.union([z.string(), z.number()]) })),
    });
    expect(toOpenAIResponsesTool(withInput(nested)).parameters).toMatchObject({
      additionalProperties: false,
      properties: { filters: { items: { additionalProperties: false, required: ['field', 'value'] } } },
    });
  });

  it('Responses API tools: not strict when strict mode cannot say the same (optional, open, oneOf)', () => {
    const loose = [
      z.object({ query: z.string(), limit: z.number().optional() }),
      z.object({ query: z.string() }).passthrough(),
      {
        type: 'object',
        properties: { at: { oneOf: [{ type: 'string' }, { type: 'integer' }] } },
        required: ['at'],
      },
    ];
    for (const input of loose) {
      const declared = toOpenAIResponsesTool(withInput(input));
      expect(declared.strict).toBe(false);
      expect(declared.parameters).toEqual(toJsonSchema(input));
    }
  });

  it('Anthropic tools', () => {
    expect(toAnthropicTool(tool())).toEqual({
      name: 'search_docs',
      description: 'Search the documentation',
      input_schema: schema,
    });
  });

  it('Gemini function declarations: NON_BLOCKING only for tools that may run in the background, BLOCKING said for the others', () => {
    expect(toGeminiFunctionDeclaration(tool('inline'))).toEqual({
      name: 'search_docs',
      description: 'Search the documentation',
      parametersJsonSchema: schema,
      behavior: 'BLOCKING',
    });
    expect(toGeminiFunctionDeclaration(tool()).behavior).toBe('BLOCKING');
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
