import { type CallReply, defineTool, ToolRegistry } from '@baton/contracts';
import { describe, expect, expectTypeOf, it } from 'vitest';
import { z } from 'zod';
import { createRuntime, type Runtime } from '../src/index.js';

const searchDocs = defineTool({
  name: 'search_docs',
  description: 'Search the documentation',
  input: z.object({ query: z.string(), limit: z.number().optional() }),
  output: z.object({ hits: z.array(z.string()) }),
  execute: ({ query }) => ({ hits: [`${query}: page 1`] }),
});
const wordCount = defineTool({
  name: 'word_count',
  description: 'Counts words',
  input: z.object({ text: z.string() }),
  execute: ({ text }) => text.split(' ').length,
});

describe('a runtime made from a list of tools types call by name', () => {
  it('infers args and the output of a successful reply; a wrong name or wrong args do not compile', async () => {
    const runtime = createRuntime({ tools: [searchDocs, wordCount] });
    try {
      const reply = await runtime.call({ name: 'search_docs', args: { query: 'budget' }, sessionId: 's' });
      expect(reply.status).toBe('succeeded');
      if (reply.status === 'succeeded') {
        expectTypeOf(reply.output).toEqualTypeOf<{ hits: string[] }>();
        expect(reply.output.hits).toEqual(['budget: page 1']);
      }
      const counted = await runtime.call({
        name: 'word_count',
        args: { text: 'one two three' },
        sessionId: 's',
      });
      if (counted.status === 'succeeded') expectTypeOf(counted.output).toEqualTypeOf<number>();
      expect(counted.output).toBe(3);

      // What does not compile is still refused, as data, when it comes from outside at run time.
      // @ts-expect-error: a misspelt tool name
      const misspelt = await runtime.call({ name: 'search_dcos', args: { query: 'x' }, sessionId: 's' });
      expect(misspelt.error?.code).toBe('tool_not_found');
      // @ts-expect-error: arguments of the wrong shape
      const wrongArgs = await runtime.call({ name: 'word_count', args: { words: 3 }, sessionId: 's' });
      expect(wrongArgs.error?.code).toBe('invalid_arguments');
    } finally {
      await runtime.close();
    }
  });

  it('types the built-ins it was given, and is a Runtime wherever one is taken', async () => {
    const runtime = createRuntime({ tools: [wordCount], builtins: ['list_background'] });
    try {
      const listed = await runtime.call({ name: 'list_background', args: {}, sessionId: 's' });
      expect(listed.output).toEqual({ calls: [] });
      const untyped: Runtime = runtime;
      expectTypeOf(untyped.call).returns.resolves.toEqualTypeOf<CallReply>();
      expect([...untyped.tools].map((tool) => tool.name)).toEqual(['word_count', 'list_background']);
    } finally {
      await runtime.close();
    }
  });

  it('takes any name from a registry, whose tools are known only at run time', async () => {
    const runtime = createRuntime({ tools: new ToolRegistry([wordCount]) });
    try {
      const reply = await runtime.call({ name: 'anything', sessionId: 's' });
      expectTypeOf(reply).toEqualTypeOf<CallReply>();
      expect(reply.error?.code).toBe('tool_not_found');
    } finally {
      await runtime.close();
    }
  });
});
