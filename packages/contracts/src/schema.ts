import { createRequire } from 'node:module';
import type { StandardJSONSchemaV1, StandardSchemaV1 } from '@standard-schema/spec';
import type { Options as AjvOptions, ErrorObject, ValidateFunction } from 'ajv';
import type { CallIssue } from './call.js';
import { BatonError } from './errors.js';

import type { JsonSchema } from './json-schema.js';

export type { JsonSchema };

/** A zod schema, or any other Standard Schema library (valibot, arktype), or a plain JSON Schema. */
export type ToolSchema = StandardSchemaV1 | JsonSchema;

/** The value a schema validates to: inferred from a Standard Schema, a plain object for JSON Schema. */
export type InferSchemaOutput<S> = S extends StandardSchemaV1
  ? StandardSchemaV1.InferOutput<S>
  : Record<string, unknown>;

/** The value a schema takes, before its defaults and transforms: what a caller gives. */
export type InferSchemaInput<S> = S extends StandardSchemaV1
  ? StandardSchemaV1.InferInput<S>
  : Record<string, unknown>;

export type ValidationResult = { ok: true; value: unknown } | { ok: false; issues: CallIssue[] };
export type Validate = (value: unknown) => ValidationResult | Promise<ValidationResult>;

/** Duck-typed, so that a schema made by another copy of zod than ours is recognised too. */
export function isStandardSchema(schema: unknown): schema is StandardSchemaV1 {
  const props = (schema as { '~standard'?: { validate?: unknown } } | null)?.['~standard'];
  return typeof props === 'object' && props !== null && typeof props.validate === 'function';
}

function pathOf(path: StandardSchemaV1.Issue['path']): string {
  if (!path) return '';
  return path.map((segment) => String(typeof segment === 'object' ? segment.key : segment)).join('.');
}

function fromStandardResult(result: StandardSchemaV1.Result<unknown>): ValidationResult {
  if (result.issues) {
    return {
      ok: false,
      issues: result.issues.map((issue) => ({ path: pathOf(issue.path), message: issue.message })),
    };
  }
  return { ok: true, value: result.value };
}

type AjvInstance = { compile(schema: object): ValidateFunction; removeSchema(schema: object): unknown };
const sharedAjv = new Map<string, AjvInstance>();

/**
 * The ajv for a schema's dialect: JSON Schema 2020-12 (MCP's default since 2025-11-25) unless the
 * schema names draft-07 or older. ajv is loaded the first time a JSON Schema tool is defined, so
 * zod-only users never pay for it.
 */
function ajv(schema: object): AjvInstance {
  const module = ajvModuleOf(schema);
  let instance = sharedAjv.get(module);
  if (!instance) {
    instance = newAjv(module, { allErrors: true, strict: false });
    sharedAjv.set(module, instance);
  }
  return instance;
}

/** The ajv module of a schema's dialect: draft-07 and older, or 2020-12. */
function ajvModuleOf(schema: object): string {
  const dialect = (schema as { $schema?: unknown }).$schema;
  return typeof dialect === 'string' && /draft-0[4-7]/.test(dialect) ? 'ajv' : 'ajv/dist/2020';
}

function newAjv(module: string, options: AjvOptions): AjvInstance {
  const loaded = createRequire(import.meta.url)(module) as {
    default: new (options: AjvOptions) => AjvInstance;
  };
  return new loaded.default(options);
}

/** What the keyword checker's ajv says of a schema it compiles: the keywords it does not know. */
const unknownSeen: string[] = [];
const checkers = new Map<string, AjvInstance>();

/**
 * The keywords of a JSON Schema that no JSON Schema vocabulary has (`requierd` for `required`): a
 * schema with one checks less than its author meant. Keywords of one's own start with `x-`.
 */
function unknownKeywords(schema: object): string[] {
  const module = ajvModuleOf(schema);
  let checker = checkers.get(module);
  if (!checker) {
    const heard = (...messages: unknown[]) => {
      const found = /unknown keyword: "([^"]+)"/.exec(messages.map(String).join(' '));
      if (found?.[1]) unknownSeen.push(found[1]);
    };
    checker = newAjv(module, {
      allErrors: true,
      strict: false,
      strictSchema: 'log',
      logger: { log: () => {}, warn: heard, error: heard },
    });
    checkers.set(module, checker);
  }
  unknownSeen.length = 0;
  try {
    checker.compile(schema);
  } catch {
    // Not compiled: the validator's own compile says why, in its words.
  } finally {
    // Not kept: a schema compiled again (the same tool defined twice) is checked again.
    checker.removeSchema(schema);
  }
  // A `$` keyword is the core vocabulary's (`$anchor`, `$dynamicAnchor`): ajv names some unknown.
  return [...new Set(unknownSeen)].filter((keyword) => !keyword.startsWith('x-') && !keyword.startsWith('$'));
}

function ajvIssue(error: ErrorObject): CallIssue {
  const base = error.instancePath.slice(1).replaceAll('/', '.');
  const missing =
    error.keyword === 'required' ? (error.params as { missingProperty?: string }).missingProperty : undefined;
  const path = missing ? (base ? `${base}.${missing}` : missing) : base;
  return { path, message: error.message ?? 'is invalid' };
}

/** Compiles a schema once into a validator (ajv validators are compiled at definition, not per call). */
export function compileValidator(schema: ToolSchema, what: string): Validate {
  if (isStandardSchema(schema)) {
    const validate = schema['~standard'].validate;
    return (value) => {
      const result = validate(value);
      return result instanceof Promise ? result.then(fromStandardResult) : fromStandardResult(result);
    };
  }
  if (typeof schema !== 'object' || schema === null || Array.isArray(schema)) {
    throw new BatonError(
      'invalid_definition',
      `${what} must be a zod (Standard Schema) or a JSON Schema object`,
    );
  }
  const unknown = unknownKeywords(schema);
  if (unknown.length > 0) {
    throw new BatonError(
      'invalid_definition',
      `${what} is not a valid JSON Schema: unknown keyword${unknown.length > 1 ? 's' : ''} ${unknown.map((keyword) => JSON.stringify(keyword)).join(', ')} (a misspelling? a keyword of your own starts with "x-")`,
    );
  }
  let check: ValidateFunction;
  try {
    check = ajv(schema).compile(schema);
  } catch (cause) {
    throw new BatonError(
      'invalid_definition',
      `${what} is not a valid JSON Schema: ${(cause as Error).message}`,
      {
        cause,
      },
    );
  }
  return (value) =>
    check(value) ? { ok: true, value } : { ok: false, issues: (check.errors ?? []).map(ajvIssue) };
}

/** Whether a Standard Schema can say what it accepts as JSON Schema (`~standard.jsonSchema`). */
export function hasJsonSchema(schema: StandardSchemaV1): schema is StandardSchemaV1 & StandardJSONSchemaV1 {
  const props = schema['~standard'] as { jsonSchema?: { input?: unknown } };
  return typeof props.jsonSchema?.input === 'function';
}

/** The JSON Schema that provider declarations carry, from either kind of schema. */
export function toJsonSchema(schema: ToolSchema, direction: 'input' | 'output' = 'input'): JsonSchema {
  if (!isStandardSchema(schema)) return schema;
  if (!hasJsonSchema(schema)) {
    throw new BatonError(
      'invalid_definition',
      `the ${schema['~standard'].vendor} schema cannot be turned into JSON Schema (it lacks ~standard.jsonSchema)`,
    );
  }
  const converted = schema['~standard'].jsonSchema[direction]({ target: 'draft-2020-12' });
  const { $schema: _dialect, ...rest } = converted;
  return rest;
}
