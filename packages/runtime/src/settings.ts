import {
  type AnyTool,
  type ArgPath,
  BatonError,
  checkRetryPolicy,
  DEFAULT_INLINE_BUDGET_MS,
  DEFAULT_MAX_ARGS_BYTES,
  DEFAULT_MAX_ARGS_DEPTH,
  defaultResultFormatter,
  type ExecutionMode,
  MAX_ID_CHARS,
  type ResultFormatter,
  type RetryPolicy,
} from '@baton/contracts';
import type { Store } from '@baton/store';
import type { ArgumentLimits } from './arguments.js';
import { BUILTIN_TOOLS } from './builtin-names.js';
import * as defaults from './defaults.js';
import { newId } from './ids.js';
import { invalidOptionMessage, roleNeedsSharedStoreMessage, unknownBuiltinMessage } from './messages.js';
import type { BuiltinTool, CallInspector, RuntimeLimits, RuntimeOptions, RuntimeRole } from './options.js';

/** What a call of one tool runs with: the tool's own settings, else the runtime's. */
export interface ToolSettings {
  inlineBudgetMs: number;
  timeoutMs: number | undefined;
  retry: RetryPolicy | undefined;
  /** Runs a call may have in all: its retry policy's `maxAttempts`, else 1. */
  maxAttempts: number;
  /** Runs a recovered idempotent call may have in all: its policy's, else the runtime's `maxAttempts`. */
  recoveryAttempts: number;
  formatter: ResultFormatter;
  /** The arguments its tool marks secret: what the model and the store are told of a call leaves them out. */
  secretArgs: readonly ArgPath[];
}

/** The runtime's options, checked and with every default filled in: resolved once, read everywhere. */
export interface Settings {
  readonly instanceId: string;
  readonly role: RuntimeRole;
  readonly defaultMode: ExecutionMode;
  readonly argumentLimits: ArgumentLimits;
  readonly maxIdChars: number;
  readonly maxOutputChars: number;
  readonly leaseMs: number;
  /** How long a store that cannot be reached is ridden out; 0: not at all. */
  readonly storeRetryMs: number;
  /**
   * How long this instance's calls are its own past its last heartbeat, as others read it from
   * the store: its lease, and the ride-out on top where the store can be away, so that no call of
   * a live instance riding out an outage is taken over (docs/DESIGN.md, "Leases and outages").
   */
  readonly holdMs: number;
  readonly limits: Required<RuntimeLimits>;
  /** A client: how long a call it waits for may wait to be claimed before it goes to the background. */
  readonly claimWaitMs: number;
  readonly tenantOf: ((sessionId: string) => string) | undefined;
  /** On a shared store: how often to look for work, lapsed leases and ends. */
  readonly pollMs: number;
  /** On a shared store only: progress is conflated to one event per call this often. */
  readonly progressIntervalMs: number | undefined;
  /** Intermediate results: at most one written per call this often. */
  readonly updateIntervalMs: number;
  readonly retentionTtlMs: number | undefined;
  readonly inspect: CallInspector | undefined;
  readonly builtins: readonly BuiltinTool[];
  /** The settings of calls of this tool (the same object every time). */
  forTool(tool: AnyTool | undefined): ToolSettings;
  /** A run (`spawn_background`, a schedule) is a background call whatever its tool's own mode. */
  modeOf(tool: AnyTool, run: boolean): ExecutionMode;
}

/** A number option must be a positive, finite number; unset stays unset. */
export function positive(name: string, value: number | undefined): number | undefined {
  if (value === undefined) return undefined;
  if (!(Number.isFinite(value) && value > 0)) {
    throw new BatonError('invalid_definition', invalidOptionMessage(name));
  }
  return value;
}

function resolveLimits(limits: RuntimeLimits = {}): Required<RuntimeLimits> {
  const concurrency = positive('limits.concurrency', limits.concurrency) ?? defaults.DEFAULT_CONCURRENCY;
  // One session, or one tenant, holds at most its fair share of the slots unless told otherwise.
  const fairShare = defaults.fairShareOf(concurrency);
  const limit = (key: keyof RuntimeLimits, fallback: number) =>
    positive(`limits.${key}`, limits[key]) ?? fallback;
  const waitingForWorkers = limit('waitingForWorkers', defaults.DEFAULT_WAITING_FOR_WORKERS);
  return {
    concurrency,
    maxQueued: limit('maxQueued', defaults.DEFAULT_MAX_QUEUED),
    backgroundPerSession: limit('backgroundPerSession', defaults.DEFAULT_BACKGROUND_PER_SESSION),
    backgroundPerWorker: limit('backgroundPerWorker', defaults.DEFAULT_BACKGROUND_PER_WORKER),
    schedulesPerSession: limit('schedulesPerSession', defaults.DEFAULT_SCHEDULES_PER_SESSION),
    runningPerSession: limit('runningPerSession', fairShare),
    runningPerTenant: limit('runningPerTenant', fairShare),
    waitingForWorkers,
    waitingForWorkersPerTenant: limit('waitingForWorkersPerTenant', defaults.fairShareOf(waitingForWorkers)),
  };
}

const BUILTINS: readonly string[] = BUILTIN_TOOLS;

function checkBuiltins(builtins: readonly BuiltinTool[] = []): readonly BuiltinTool[] {
  const unknown = builtins.find((name) => !BUILTINS.includes(name));
  if (unknown !== undefined)
    throw new BatonError('invalid_definition', unknownBuiltinMessage(unknown, BUILTINS));
  return builtins;
}

export function resolveSettings(options: RuntimeOptions, store: Store): Settings {
  checkRetryPolicy('createRuntime', options.retry);
  const role = options.role ?? 'both';
  if (role !== 'both' && !store.listen) {
    throw new BatonError('invalid_definition', roleNeedsSharedStoreMessage(role));
  }
  const inlineBudgetMs = positive('inlineBudgetMs', options.inlineBudgetMs) ?? DEFAULT_INLINE_BUDGET_MS;
  const timeoutMs = positive('timeoutMs', options.timeoutMs);
  const maxAttempts = positive('maxAttempts', options.maxAttempts) ?? defaults.DEFAULT_MAX_ATTEMPTS;
  const formatter: ResultFormatter = { ...defaultResultFormatter, ...options.formatter };
  const defaultMode = options.defaultMode ?? 'inline';
  const perTool = new WeakMap<AnyTool, ToolSettings>();
  const runtimeWide: ToolSettings = {
    inlineBudgetMs,
    timeoutMs,
    retry: options.retry,
    maxAttempts: options.retry?.maxAttempts ?? 1,
    recoveryAttempts: options.retry?.maxAttempts ?? maxAttempts,
    formatter,
    secretArgs: [],
  };
  const forTool = (tool: AnyTool | undefined): ToolSettings => {
    if (!tool) return runtimeWide;
    let settings = perTool.get(tool);
    if (!settings) {
      const { execution } = tool;
      const retry = execution.retry ?? options.retry;
      settings = {
        inlineBudgetMs: execution.inlineBudgetMs ?? inlineBudgetMs,
        timeoutMs: execution.timeoutMs ?? timeoutMs,
        retry,
        maxAttempts: retry?.maxAttempts ?? 1,
        recoveryAttempts: retry?.maxAttempts ?? maxAttempts,
        formatter: tool.formatter ? { ...formatter, ...tool.formatter } : formatter,
        secretArgs: tool.secretArgs ?? [],
      };
      perTool.set(tool, settings);
    }
    return settings;
  };
  const ttl = options.retention && positive('retention.endedTtlMs', options.retention.endedTtlMs);
  const leaseMs = positive('leaseMs', options.leaseMs) ?? defaults.DEFAULT_LEASE_MS;
  const storeRetryMs =
    options.storeRetryMs === 0
      ? 0
      : (positive('storeRetryMs', options.storeRetryMs) ?? defaults.DEFAULT_STORE_RETRY_MS);
  return {
    instanceId: options.instanceId ?? newId(),
    role,
    defaultMode,
    argumentLimits: {
      maxBytes: positive('maxArgsBytes', options.maxArgsBytes) ?? DEFAULT_MAX_ARGS_BYTES,
      maxDepth: positive('maxArgsDepth', options.maxArgsDepth) ?? DEFAULT_MAX_ARGS_DEPTH,
    },
    maxIdChars: positive('maxIdChars', options.maxIdChars) ?? MAX_ID_CHARS,
    maxOutputChars: positive('maxOutputChars', options.maxOutputChars) ?? defaults.DEFAULT_MAX_OUTPUT_CHARS,
    leaseMs,
    storeRetryMs,
    holdMs: leaseMs + (store.isUnavailable ? storeRetryMs : 0),
    limits: resolveLimits(options.limits),
    claimWaitMs: positive('claimWaitMs', options.claimWaitMs) ?? defaults.DEFAULT_CLAIM_WAIT_MS,
    tenantOf: options.tenantOf,
    pollMs: positive('pollMs', options.pollMs) ?? defaults.DEFAULT_POLL_MS,
    progressIntervalMs: store.listen
      ? (positive('progressIntervalMs', options.progressIntervalMs) ?? defaults.DEFAULT_PROGRESS_INTERVAL_MS)
      : undefined,
    updateIntervalMs:
      positive('updateIntervalMs', options.updateIntervalMs) ?? defaults.DEFAULT_UPDATE_INTERVAL_MS,
    retentionTtlMs: ttl || undefined,
    inspect: options.inspect,
    builtins: checkBuiltins(options.builtins),
    forTool,
    modeOf: (tool, run) => (run ? 'background' : (tool.execution.mode ?? defaultMode)),
  };
}
