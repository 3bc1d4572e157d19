import { describe, expect, expectTypeOf, it } from 'vitest';
import { z } from 'zod';
import {
  BatonError,
  defineTool,
  isBatonError,
  success,
  type ToolArgs,
  type ToolContext,
  type ToolOutput,
} from '../src/index.js';

const noop = () => null;

describe('defineTool', () => {
  it('infers the argument type of execute from a zod schema', () => {
    const tool = defineTool({
      name: 'search_docs',
      description: 'Search the docs',
      input: z.object({ query: z.string(), limit: z.number().optional() }),
      execute(args, ctx) {
        expectTypeOf(args).toEqualTypeOf<{ query: string; limit?: number | undefined }>();
        expectTypeOf(ctx).toEqualTypeOf<ToolContext<undefined>>();
        return { hits: [args.query] };
      },
    });
    expect(tool.name).toBe('search_docs');
  });

  it('types ctx.prepared from what prepare returns', () => {
    defineTool({
      name: 'with_prepare',
      description: 'p',
      input: z.object({ url: z.string() }),
      prepare: async ({ url }) => ({ host: new URL(url).host }),
      execute(_, ctx) {
        expectTypeOf(ctx.prepared).toEqualTypeOf<{ host: string }>();
        return ctx.prepared.host;
      },
    });
  });

  it('refuses a retry policy that cannot work, at definition', () => {
    const define = (retry: object) => () =>
      defineTool({
        name: 't',
        description: '',
        input: z.object({}),
        execution: { retry },
        execute: noop,
      } as never);
    expect(define({ maxAttempts: 0 })).toThrow(
      'tool "t": execution: retry.maxAttempts must be an integer of 1 or more',
    );
    expect(define({ maxAttempts: 3, backoffCoefficient: 0.5 })).toThrow(
      'retry.backoffCoefficient must be 1 or more',
    );
    expect(define({ maxAttempts: 3, initialIntervalMs: -1 })).toThrow(
      'retry.initialIntervalMs must be 0 or more',
    );
  });

  it('fills the execution defaults and leaves the mode to the runtime', () => {
    const tool = defineTool({ name: 't', description: '', input: z.object({}), execute: noop });
    expect(tool.execution).toEqual({
      mode: undefined,
      inlineBudgetMs: undefined,
      timeoutMs: undefined,
      maxConcurrency: undefined,
      retry: undefined,
      concurrency: 'parallel',
      idempotent: false,
      readOnly: false,
      scheduling: 'when_idle',
    });
  });

  it.each(['', 'has space', 'dot.name', 'x'.repeat(65), 'ünïcode'])(
    'refuses the name %j at definition',
    (name) => {
      const define = () => defineTool({ name, description: '', input: z.object({}), execute: noop });
      expect(define).toThrow(BatonError);
      expect(define).toThrow(/must match/);
    },
  );

  it('accepts names of letters, digits, _ and - up to 64 characters', () => {
    for (const name of ['a', 'search_docs', 'get-weather-2', 'x'.repeat(64)]) {
      expect(defineTool({ name, description: '', input: z.object({}), execute: noop }).name).toBe(name);
    }
  });

  it('refuses bad execution options with the field named', () => {
    const define = (execution: object) => () =>
      defineTool({ name: 't', description: '', input: z.object({}), execution, execute: noop });
    expect(define({ mode: 'later' })).toThrow('execution.mode must be one of inline, auto, background');
    expect(define({ concurrency: 'some' })).toThrow('execution.concurrency');
    expect(define({ scheduling: 'now' })).toThrow('execution.scheduling');
    expect(define({ timeoutMs: -1 })).toThrow('execution.timeoutMs must be a positive number');
    expect(define({ inlineBudgetMs: 0 })).toThrow('execution.inlineBudgetMs');
    expect(define({ maxConcurrency: 1.5 })).toThrow('execution.maxConcurrency must be a positive integer');
  });

  it('refuses an invalid JSON Schema at definition, with code invalid_definition', () => {
    try {
      defineTool({
        name: 't',
        description: '',
        input: { type: 'object', properties: { a: { type: 'nope' } } },
        execute: noop,
      });
      expect.unreachable();
    } catch (error) {
      expect(isBatonError(error) && error.code).toBe('invalid_definition');
      expect((error as Error).message).toMatch(/tool "t": input is not a valid JSON Schema/);
    }
  });

  it('takes JSON Schema 2020-12 ($schema, $defs, if/then/else) and draft-07 alike', () => {
    const modern = defineTool({
      name: 'contact',
      description: '',
      input: {
        $schema: 'https://json-schema.org/draft/2020-12/schema',
        type: 'object',
        $defs: { address: { type: 'object', properties: { city: { type: 'string' } } } },
        properties: { address: { $ref: '#/$defs/address' }, via: { enum: ['phone', 'email'] }, phone: {} },
        if: { properties: { via: { const: 'phone' } }, required: ['via'] },
        // biome-ignore lint/suspicious/noThenProperty: JSON Schema's if/then/else keyword
        then: { required: ['phone'] },
      },
      execute: noop,
    });
    expect(modern.validateInput({ via: 'email', address: { city: 'Lyon' } })).toMatchObject({ ok: true });
    expect(modern.validateInput({ via: 'phone' })).toMatchObject({
      ok: false,
      issues: expect.arrayContaining([{ path: 'phone', message: "must have required property 'phone'" }]),
    });
    expect(modern.validateInput({ address: { city: 3 } })).toMatchObject({ ok: false });
    const draft7 = defineTool({
      name: 'old',
      description: '',
      input: { $schema: 'http://json-schema.org/draft-07/schema#', type: 'object', required: ['q'] },
      execute: noop,
    });
    expect(draft7.validateInput({})).toMatchObject({ ok: false });
  });

  it('validates JSON Schema input with ajv and reports every issue with its path', () => {
    const tool = defineTool({
      name: 't',
      description: '',
      input: {
        type: 'object',
        properties: {
          query: { type: 'string' },
          page: { type: 'object', properties: { n: { type: 'integer' } } },
        },
        required: ['query', 'mode'],
      },
      execute: noop,
    });
    expect(tool.validateInput({ query: 'x' })).toEqual({
      ok: false,
      issues: [{ path: 'mode', message: "must have required property 'mode'" }],
    });
    const result = tool.validateInput({ query: 3, page: { n: 'x' }, mode: 1 });
    expect(result).toEqual({
      ok: false,
      issues: [
        { path: 'query', message: 'must be string' },
        { path: 'page.n', message: 'must be integer' },
      ],
    });
    expect(tool.validateInput({ query: 'x', mode: 1 })).toEqual({ ok: true, value: { query: 'x', mode: 1 } });
  });

  it('validates zod input and keeps the parsed value', () => {
    const tool = defineTool({
      name: 't',
      description: '',
      input: z.object({ n: z.coerce.number() }),
      execute: noop,
    });
    expect(tool.validateInput({ n: '4' })).toEqual({ ok: true, value: { n: 4 } });
    expect(tool.validateInput({ n: 'x' })).toMatchObject({ ok: false, issues: [{ path: 'n' }] });
  });

  it('accepts any Standard Schema, not only this copy of zod (duck typing, no instanceof)', () => {
    const evenNumber = {
      '~standard': {
        version: 1 as const,
        vendor: 'hand-made',
        validate: (value: unknown) =>
          typeof value === 'object' && value !== null && (value as { n: number }).n % 2 === 0
            ? { value: value as { n: number } }
            : { issues: [{ message: 'n must be even', path: ['n'] }] },
      },
    };
    const tool = defineTool({ name: 't', description: '', input: evenNumber, execute: ({ n }) => n });
    expect(tool.validateInput({ n: 3 })).toEqual({
      ok: false,
      issues: [{ path: 'n', message: 'n must be even' }],
    });
    expect(tool.validateInput({ n: 4 })).toEqual({ ok: true, value: { n: 4 } });
  });

  it('keeps the name as a literal type, and the output: its schema, else what execute returns', () => {
    const typed = defineTool({
      name: 'search_docs',
      description: 'Search',
      input: z.object({ query: z.string() }),
      output: z.object({ hits: z.array(z.string()) }),
      execute: ({ query }) => ({ hits: [query] }),
    });
    expectTypeOf(typed.name).toEqualTypeOf<'search_docs'>();
    expectTypeOf<ToolArgs<typeof typed>>().toEqualTypeOf<{ query: string }>();
    expectTypeOf<ToolOutput<typeof typed>>().toEqualTypeOf<{ hits: string[] }>();

    const inferred = defineTool({
      name: 'word_count',
      description: 'Counts words',
      input: z.object({ text: z.string() }),
      async execute({ text }) {
        expectTypeOf(text).toEqualTypeOf<string>();
        return text.split(' ').length;
      },
    });
    expectTypeOf<ToolOutput<typeof inferred>>().toEqualTypeOf<number>();

    const wrapped = defineTool({
      name: 'snapshot',
      description: 'A picture',
      input: z.object({}),
      execute: () => success({ taken: true }, { images: [] }),
    });
    expectTypeOf<ToolOutput<typeof wrapped>>().toEqualTypeOf<{ taken: boolean }>();
    expect([typed.name, inferred.name, wrapped.name]).toEqual(['search_docs', 'word_count', 'snapshot']);
  });

  it('types a call by what the caller gives: a field with a default may be left out, and execute gets it filled in', () => {
    const search = defineTool({
      name: 'search',
      description: 'Search',
      input: z.object({ query: z.string(), limit: z.number().default(10) }),
      execute({ limit }) {
        expectTypeOf(limit).toEqualTypeOf<number>();
        return limit;
      },
    });
    expectTypeOf<ToolArgs<typeof search>>().toEqualTypeOf<{ query: string; limit?: number | undefined }>();
    expect(search.validateInput({ query: 'x' })).toEqual({ ok: true, value: { query: 'x', limit: 10 } });
  });

  it('refuses an input that does not describe an object: a model fills in named arguments', () => {
    expect(() =>
      defineTool({ name: 'shout', description: 'Shouts', input: z.string(), execute: (text) => text }),
    ).toThrow(
      'tool "shout": input must describe an object (the arguments by name), not "string": wrap it, as z.object({ text: z.string() })',
    );
    expect(() =>
      defineTool({ name: 'count', description: 'Counts', input: { type: 'array' }, execute: () => 0 }),
    ).toThrow(/^tool "count": input must describe an object \(the arguments by name\), not "array"/);
    // An object, or a schema that says no type (a union of objects), is a tool's input.
    expect(
      defineTool({ name: 'ok', description: '', input: { type: 'object' }, execute: () => 0 }).name,
    ).toBe('ok');
  });

  it('refuses the mistakes a first tool makes, where it is defined: no input, a shape of zod schemas, a misspelled keyword', () => {
    expect(() =>
      defineTool({ name: 'bare', description: '', execute: () => 0 } as unknown as Parameters<
        typeof defineTool
      >[0]),
    ).toThrow(
      'tool "bare": input is required: describe the arguments, as z.object({ text: z.string() }) (z.object({}) for none)',
    );
    expect(() =>
      defineTool({
        name: 'search',
        description: '',
        input: { q: z.string(), limit: z.number() } as unknown as { type: 'object' },
        execute: () => 0,
      }),
    ).toThrow(
      'tool "search": input is a shape of schemas (q, limit), not a schema: wrap it in z.object(...), as z.object({ q: … })',
    );
    const misspelled = {
      type: 'object',
      properties: { q: { type: 'string', minLenght: 1 } },
      requierd: ['q'],
    };
    for (let twice = 0; twice < 2; twice++) {
      expect(() =>
        defineTool({ name: 'search', description: '', input: misspelled, execute: () => 0 }),
      ).toThrow(
        'tool "search": input is not a valid JSON Schema: unknown keywords "requierd", "minLenght" (a misspelling? a keyword of your own starts with "x-")',
      );
    }
    // A keyword of one's own, and the annotations every vocabulary has, are taken.
    expect(
      defineTool({
        name: 'search',
        description: '',
        input: {
          type: 'object',
          properties: { q: { type: 'string', title: 'Query', examples: ['tides'], writeOnly: true } },
          required: ['q'],
          'x-order': ['q'],
        },
        execute: () => 0,
      }).name,
    ).toBe('search');
  });

  it('keeps the OAuth scope a tool needs, and refuses one that is not a scope token', () => {
    const tool = (scope: string) =>
      defineTool({ name: 'deploy', description: '', scope, input: { type: 'object' }, execute: () => 0 });
    expect(tool('deploy:write').scope).toBe('deploy:write');
    expect(
      defineTool({ name: 'any', description: '', input: { type: 'object' }, execute: () => 0 }).scope,
    ).toBe(undefined);
    for (const bad of ['', 'two words', 'quo"te', 'back\\slash'])
      expect(() => tool(bad)).toThrow(/scope must be one OAuth scope token/);
  });
});
