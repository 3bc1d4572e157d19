import type { StandardSchemaV1 } from '@standard-schema/spec';
import type { Concurrency, ExecutionMode, RetryPolicy, Scheduling } from './call.js';
import type { PrepareContext, ToolContext } from './context.js';
import { BatonError } from './errors.js';
import type { ResultFormatter } from './formatter.js';
import { TOOL_NAME_PATTERN } from './limits.js';
import type { ConnectionRequired, ToolSuccess } from './results.js';
import {
  compileValidator,
  hasJsonSchema,
  type InferSchemaInput,
  type InferSchemaOutput,
  isStandardSchema,
  type ToolSchema,
  toJsonSchema,
  type Validate,
} from './schema.js';
import { type ArgPath, secretPathsOf } from './secret-args.js';

export interface ExecutionOptions {
  /** Unset: the runtime's `defaultMode`, which is `inline` unless the runtime says otherwise. */
  mode?: ExecutionMode;
  /** Overrides the runtime's inline budget for this tool (`auto` mode). */
  inlineBudgetMs?: number;
  /** A hard limit on one run: past it the call ends `timed_out` and its signal is aborted. */
  timeoutMs?: number;
  /**
   * A stall: a run that gives no sign of life (progress, status, log, `ctx.heartbeat()`) for this
   * long, while it waits for nothing (`waitFor`, `input`, `nextMessage` do not count), is stopped:
   * its signal is aborted, and it is tried again if its retry policy allows, or else ends
   * `timed_out`, saying it stalled.
   */
  heartbeatTimeoutMs?: number;
  /** `exclusive`: runs alone in its session, never beside another call of the same session. */
  concurrency?: Concurrency;
  /** At most this many runs of this tool at once in one runtime (an API's rate, a licence); more wait. */
  maxConcurrency?: number;
  /** Running it twice with the same arguments is harmless: it may be re-run after a crash. */
  idempotent?: boolean;
  readOnly?: boolean;
  /** How the model takes the notification of a background result. Default `when_idle`. */
  scheduling?: Scheduling;
  /** How a failed run is tried again. Unset: the runtime's policy; without one a call runs once. */
  retry?: RetryPolicy;
  /** The call waits for `runtime.approve()` or `runtime.reject()` before it runs (a function decides per call). */
  needsApproval?: boolean | ((args: never) => boolean | Promise<boolean>);
}

/** What `execute` may return: a plain value is a success. */
export type ToolReturn<T> = T | ToolSuccess<T> | ConnectionRequired;

type OutputOf<O> = O extends StandardSchemaV1 ? StandardSchemaV1.InferInput<O> : unknown;

/** What a successful call gives, read from what `execute` returns when no output schema says it. */
type Returned<E> = E extends (...args: never[]) => infer R ? ValueOf<Awaited<R>> : unknown;
type ValueOf<R> = R extends ConnectionRequired ? never : R extends ToolSuccess<infer T> ? T : R;
type DefinedOutput<O, E> = O extends StandardSchemaV1 ? OutputOf<O> : Returned<E>;

/** What a tool's `messages` schema makes of a message sent to its call (none declared: unknown). */
export type MessageOf<M> = M extends ToolSchema ? InferSchemaOutput<M> : unknown;

export interface ToolConfig<
  I extends ToolSchema,
  O extends ToolSchema | undefined,
  P = undefined,
  M extends ToolSchema | undefined = undefined,
> {
  name: string;
  title?: string;
  description: string;
  /**
   * The OAuth scope a caller's access token must hold to see and call the tool, where a server
   * takes OAuth tokens (static tokens hold every scope). Unset: any caller of the tenant.
   */
  scope?: string;
  input: I;
  /** When given, the tool's value is checked against it; a mismatch is an `internal_error`. */
  output?: O;
  execution?: ExecutionOptions;
  /**
   * Steering: the call takes messages while it runs (`runtime.steer`), each checked against this
   * schema as arguments are, and read with `ctx.nextMessage()` or `ctx.takeMessages()`. Unset: a
   * message to its calls is refused with `not_steerable`.
   */
  messages?: M;
  /** Shapes this tool's background replies; unset methods fall back to the runtime's formatter. */
  formatter?: Partial<ResultFormatter>;
  /**
   * Runs before the call is queued (cheap checks, resolving what the call will need); what it
   * returns is `ctx.prepared`, kept with the call. If it throws, the call ends without running.
   */
  prepare?(args: InferSchemaOutput<I>, ctx: PrepareContext): P | Promise<P>;
  execute(
    args: InferSchemaOutput<I>,
    ctx: ToolContext<P, MessageOf<M>>,
  ): ToolReturn<OutputOf<O>> | Promise<ToolReturn<OutputOf<O>>>;
}

/**
 * A defined tool: its config, its resolved execution options, and its compiled validators. `Name`
 * is its name as a literal type, so that a runtime made from a list of tools types `call` by name.
 */
export interface Tool<
  Args = Record<string, unknown>,
  Output = unknown,
  Prepared = unknown,
  Name extends string = string,
  CallArgs = Args,
> {
  /**
   * Types only, never set: the arguments a call gives, before the input schema's defaults and
   * transforms fill them in (`execute` gets `Args`, after them).
   */
  readonly callArgs?: CallArgs;
  readonly name: Name;
  readonly title?: string;
  readonly description: string;
  readonly scope?: string;
  readonly input: ToolSchema;
  /**
   * The arguments its input schema marks secret (`writeOnly: true`): shown `[redacted]` wherever a
   * call leaves the runtime (the server's API, the inspector, logs). The store keeps them, since a
   * call recovered after a crash runs with them.
   */
  readonly secretArgs?: readonly ArgPath[];
  readonly output?: ToolSchema;
  readonly execution: Readonly<Required<Omit<ExecutionOptions, OptionalExecution>>> &
    Readonly<Pick<ExecutionOptions, OptionalExecution>>;
  readonly formatter?: Partial<ResultFormatter>;
  readonly validateInput: Validate;
  readonly validateOutput?: Validate;
  /** Steering: the schema of the messages its calls take, and its validator; absent, they take none. */
  readonly messages?: ToolSchema;
  readonly validateMessage?: Validate;
  prepare?(args: Args, ctx: PrepareContext): Prepared | Promise<Prepared>;
  execute(args: Args, ctx: ToolContext<Prepared>): ToolReturn<Output> | Promise<ToolReturn<Output>>;
}

type OptionalExecution =
  | 'mode'
  | 'inlineBudgetMs'
  | 'timeoutMs'
  | 'heartbeatTimeoutMs'
  | 'maxConcurrency'
  | 'retry'
  | 'needsApproval';

export type AnyTool = Tool<never, unknown, unknown, string, unknown>;

/** The arguments a tool's calls take (before its schema's defaults), and the value a successful one gives. */
export type ToolArgs<T> = T extends { readonly callArgs?: infer CallArgs } ? CallArgs : never;
export type ToolOutput<T> = T extends Tool<never, infer Output, unknown, string, unknown> ? Output : never;

const MODES: readonly ExecutionMode[] = ['inline', 'auto', 'background'];
const CONCURRENCIES: readonly Concurrency[] = ['parallel', 'exclusive'];
const SCHEDULINGS: readonly Scheduling[] = ['interrupt', 'when_idle', 'silent'];

function checkOneOf<T>(name: string, field: string, value: T | undefined, allowed: readonly T[]): void {
  if (value !== undefined && !allowed.includes(value)) {
    throw new BatonError(
      'invalid_definition',
      `tool "${name}": ${field} must be one of ${allowed.join(', ')}`,
    );
  }
}

function checkPositive(name: string, field: string, value: number | undefined): void {
  if (value !== undefined && !(Number.isFinite(value) && value > 0)) {
    throw new BatonError(
      'invalid_definition',
      `tool "${name}": ${field} must be a positive number of milliseconds`,
    );
  }
}

/**
 * Defines a tool. Its only jobs are to infer `execute`'s argument type from `input` and to refuse a
 * bad definition now rather than at call time.
 */
/** A retry policy that cannot work is refused when the tool is defined. Shared with the runtime's own policy. */
export function checkRetryPolicy(owner: string, policy: RetryPolicy | undefined): void {
  if (policy === undefined) return;
  const fail = (message: string) => {
    throw new BatonError('invalid_definition', `${owner}: retry.${message}`);
  };
  if (!(Number.isInteger(policy.maxAttempts) && policy.maxAttempts >= 1))
    fail('maxAttempts must be an integer of 1 or more');
  for (const field of ['initialIntervalMs', 'maximumIntervalMs'] as const) {
    const value = policy[field];
    if (value !== undefined && !(Number.isFinite(value) && value >= 0)) fail(`${field} must be 0 or more`);
  }
  const coefficient = policy.backoffCoefficient;
  if (coefficient !== undefined && !(Number.isFinite(coefficient) && coefficient >= 1)) {
    fail('backoffCoefficient must be 1 or more');
  }
}

/**
 * A tool's arguments are named: its input describes an object. Providers require it (an MCP
 * `inputSchema` and an OpenAI function's `parameters` are objects), and a model fills fields.
 * Gives the arguments it marks secret.
 */
function checkObjectInput(name: string, input: ToolSchema | undefined): readonly ArgPath[] {
  if (input === undefined || input === null) {
    throw new BatonError(
      'invalid_definition',
      `tool "${name}": input is required: describe the arguments, as z.object({ text: z.string() }) (z.object({}) for none)`,
    );
  }
  if (isZodShape(input)) {
    throw new BatonError(
      'invalid_definition',
      `tool "${name}": input is a shape of schemas (${Object.keys(input).join(', ')}), not a schema: wrap it in z.object(...), as z.object({ ${Object.keys(input)[0]}: … })`,
    );
  }
  // A schema with no JSON Schema form is checked when a provider needs one.
  if (isStandardSchema(input) && !hasJsonSchema(input)) return [];
  const schema = toJsonSchema(input);
  const { type } = schema as { type?: unknown };
  if (type === undefined || type === 'object') return Object.freeze(secretPathsOf(schema));
  throw new BatonError(
    'invalid_definition',
    `tool "${name}": input must describe an object (the arguments by name), not ${JSON.stringify(type)}: wrap it, as z.object({ text: z.string() })`,
  );
}

/**
 * An object of Standard Schemas (`{ q: z.string() }`), as the MCP SDK's `server.tool()` takes its
 * arguments: not a schema itself, it would be read as a JSON Schema that checks nothing.
 */
function isZodShape(input: unknown): input is Record<string, unknown> {
  if (typeof input !== 'object' || input === null || Array.isArray(input) || isStandardSchema(input))
    return false;
  const values = Object.values(input);
  return values.length > 0 && values.some((value) => isStandardSchema(value));
}

export function defineTool<
  I extends ToolSchema,
  O extends ToolSchema | undefined = undefined,
  P = undefined,
  const N extends string = string,
  E = unknown,
  M extends ToolSchema | undefined = undefined,
>(
  config: ToolConfig<I, O, P, M> & { name: N; execute: E },
): Tool<InferSchemaOutput<I>, DefinedOutput<O, E>, P, N, InferSchemaInput<I>> {
  const { name, execution = {} } = config;
  if (typeof name !== 'string' || !TOOL_NAME_PATTERN.test(name)) {
    throw new BatonError(
      'invalid_definition',
      `tool name ${JSON.stringify(name)} must match ${TOOL_NAME_PATTERN} (letters, digits, _ and -, at most 64)`,
    );
  }
  if (typeof config.description !== 'string') {
    throw new BatonError('invalid_definition', `tool "${name}": description must be a string`);
  }
  if (typeof config.execute !== 'function') {
    throw new BatonError('invalid_definition', `tool "${name}": execute must be a function`);
  }
  checkOneOf(name, 'execution.mode', execution.mode, MODES);
  checkOneOf(name, 'execution.concurrency', execution.concurrency, CONCURRENCIES);
  checkOneOf(name, 'execution.scheduling', execution.scheduling, SCHEDULINGS);
  checkPositive(name, 'execution.inlineBudgetMs', execution.inlineBudgetMs);
  checkPositive(name, 'execution.timeoutMs', execution.timeoutMs);
  checkPositive(name, 'execution.heartbeatTimeoutMs', execution.heartbeatTimeoutMs);
  checkRetryPolicy(`tool "${name}": execution`, execution.retry);
  const secretArgs = checkObjectInput(name, config.input);
  if (config.prepare !== undefined && typeof config.prepare !== 'function') {
    throw new BatonError('invalid_definition', `tool "${name}": prepare must be a function`);
  }
  if (
    execution.maxConcurrency !== undefined &&
    !(Number.isInteger(execution.maxConcurrency) && execution.maxConcurrency > 0)
  ) {
    throw new BatonError(
      'invalid_definition',
      `tool "${name}": execution.maxConcurrency must be a positive integer`,
    );
  }

  // RFC 6749 §3.3: a scope token is printable ASCII without spaces, quotes or backslashes.
  if (config.scope !== undefined && !/^[\x21\x23-\x5B\x5D-\x7E]+$/.test(config.scope)) {
    throw new BatonError(
      'invalid_definition',
      `tool "${name}": scope must be one OAuth scope token (printable ASCII, no spaces, quotes or backslashes)`,
    );
  }

  return Object.freeze({
    name,
    title: config.title,
    description: config.description,
    ...(config.scope !== undefined ? { scope: config.scope } : {}),
    input: config.input,
    secretArgs,
    output: config.output,
    execution: Object.freeze({
      mode: execution.mode,
      inlineBudgetMs: execution.inlineBudgetMs,
      timeoutMs: execution.timeoutMs,
      heartbeatTimeoutMs: execution.heartbeatTimeoutMs,
      maxConcurrency: execution.maxConcurrency,
      retry: execution.retry,
      needsApproval: execution.needsApproval,
      concurrency: execution.concurrency ?? 'parallel',
      idempotent: execution.idempotent ?? false,
      readOnly: execution.readOnly ?? false,
      scheduling: execution.scheduling ?? 'when_idle',
    }),
    formatter: config.formatter,
    validateInput: compileValidator(config.input, `tool "${name}": input`),
    validateOutput:
      config.output === undefined ? undefined : compileValidator(config.output, `tool "${name}": output`),
    messages: config.messages,
    validateMessage:
      config.messages === undefined
        ? undefined
        : compileValidator(config.messages, `tool "${name}": messages`),
    prepare: config.prepare,
    execute: config.execute,
  }) as Tool<InferSchemaOutput<I>, DefinedOutput<O, E>, P, N, InferSchemaInput<I>>;
}
