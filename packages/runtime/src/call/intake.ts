import {
  type AnyTool,
  type CallRecord,
  type CallReply,
  type RecordedError,
  type ToolRegistry,
  TRUSTED_CALLER,
  type ValidationResult,
} from '@baton/contracts';
import type { Store } from '@baton/store';
import { type Access, keptCaller } from '../access.js';
import { checkArguments, notifyTimes, requestIssues } from '../arguments.js';
import type { Clock } from '../clock.js';
import { newId } from '../ids.js';
import {
  backgroundPerSessionMessage,
  backgroundPerWorkerMessage,
  invalidRequestMessage,
  notJsonMessage,
  persistenceFailedMessage,
  queueFullMessage,
  toolNotFoundMessage,
} from '../messages.js';
import type { BatchOptions, BatchRequest, CallRequest } from '../options.js';
import { invalidArgumentsMessage, modelVisible, thrownOutcome } from '../outcome.js';
import type { Settings } from '../settings.js';
import { storableValue } from '../storable.js';
import type { WriteBatcher } from '../write-batcher.js';
import { failBatch } from './batches.js';
import type { Send } from './driver.js';
import type { CallBatch, LiveCall } from './live-call.js';
import { failedReply, PrepareInputs } from './prepare-inputs.js';
import { closedReply, refusedRecord, runHook } from './refusals.js';
import type { CallRegistry } from './registry.js';
import type { RepeatedCalls } from './repeated.js';
import { notSavedReply, replyOf } from './replies.js';
import type { Slots } from './slots.js';
import type { CallTracing } from './tracing.js';
import type { CallWrites } from './writes.js';

export interface IntakeDeps {
  settings: Settings;
  /** What the caller may call, and its quota. */
  access: Pick<Access, 'scopeRefusal' | 'hasQuota' | 'takeQuota'>;
  tools: ToolRegistry;
  registry: CallRegistry;
  slots: Pick<Slots, 'waiting'>;
  writes: CallWrites;
  writer: Pick<WriteBatcher, 'record' | 'recordConfirmed' | 'recordNew' | 'add'>;
  store: Pick<Store, 'getCall' | 'listen'>;
  /** A request that repeats the id of a call this process does not run (see RepeatedCalls). */
  repeated: Pick<RepeatedCalls, 'reply' | 'afterRefusal' | 'madeElsewhere'>;
  send: Send;
  clock: Clock;
  closed: () => boolean;
  /** A client's call goes to the shared store for a worker (see shared/client.ts). */
  submit: (tool: AnyTool, record: CallRecord) => Promise<CallReply>;
  /** The caller's trace, kept with the call, when tracing is on. */
  tracing?: Pick<CallTracing, 'carrier'> | undefined;
}

/** The label of a run the runtime starts for itself (`spawn_background`, a schedule). */
type RunLabel = NonNullable<CallRecord['run']>;

/** What `admit` needs of a request that passed every check. */
interface Admitted {
  tool: AnyTool;
  request: CallRequest;
  /** A run the runtime started for itself: its label. */
  run: RunLabel | undefined;
  callId: string;
  createdAt: number;
  /**
   * The arguments as given (kept on the record), and as the schema parsed them (given to the tool;
   * set once the schema has parsed them).
   */
  rawArgs: unknown;
  args: unknown;
  batch: CallBatch | undefined;
}

/**
 * The way in: a request is checked (ids, tool, arguments, limits, `prepare`, approval), and
 * becomes a live call in the queue, or a refusal with a record of its own. Bad input ends here,
 * as a reply; nothing here rejects.
 */
export class Intake {
  /** Calls whose `callId` is being looked up in the store, so that the same id twice is one call. */
  readonly #lookups = new Map<string, Promise<CallReply | undefined>>();

  constructor(private readonly deps: IntakeDeps) {}

  /**
   * A call: a caller's, or with `run` one the runtime starts for itself (`spawn_background`, a
   * schedule), in the background whatever its tool's mode, its label on its record. `freshId`: its
   * `callId` was made for it just now (see `CallOptions.freshId`).
   */
  call(request: CallRequest, run?: RunLabel, freshId = false): Promise<CallReply> {
    const refused = this.#checkRequest(request) ?? this.#scopeRefusal(request);
    if (refused) return refused;
    const createdAt = this.deps.clock.now();
    if (request.callId === undefined) return this.#validate(request, newId(), createdAt, undefined, run);
    if (freshId) {
      // Made for this call just now: no earlier call has it, so it is kept as an id made here is.
      const { callId, ...made } = request;
      return this.#validate(made, callId, createdAt, undefined, run);
    }
    const callId = request.callId;
    return this.#existing(callId).then(
      (existing) => existing ?? this.#validate(request, callId, createdAt, undefined, run),
    );
  }

  async callBatch(requests: readonly BatchRequest[], options: BatchOptions): Promise<CallReply[]> {
    const batchRequests = requests.map((request) => ({
      ...request,
      sessionId: options.sessionId,
      ...(options.messageId !== undefined ? { messageId: options.messageId } : {}),
    }));
    // Each request with ids that cannot be kept, or of a tool its caller may not call, gets its
    // own refusal; the others go on.
    const refused = await Promise.all(
      batchRequests.map((request) => this.#checkRequest(request) ?? this.#scopeRefusal(request)),
    );
    const createdAt = this.deps.clock.now();
    const batch: CallBatch = { continueOnFailure: options.continueOnFailure ?? true, calls: [] };
    // Known ids answer with their call; the others are admitted in the order of the requests.
    const existing = await Promise.all(
      batchRequests.map(
        (request, i) =>
          refused[i] ?? (request.callId === undefined ? undefined : this.#existing(request.callId)),
      ),
    );
    return Promise.all(
      batchRequests.map(
        (request, i) => existing[i] ?? this.#validate(request, request.callId ?? newId(), createdAt, batch),
      ),
    );
  }

  /** Lookups still under way (a closing runtime waits for them). */
  pending(): Promise<unknown> {
    return Promise.allSettled([...this.#lookups.values()]);
  }

  /**
   * Before anything is kept: a request to a closed runtime, or whose ids could not be stored or
   * found again, is answered at once and leaves no record (there is nothing it could be filed under).
   */
  #checkRequest(request: CallRequest): Promise<CallReply> | undefined {
    const callId = typeof request?.callId === 'string' ? request.callId : '';
    if (this.deps.closed()) return Promise.resolve(closedReply(callId));
    const issues = requestIssues(request, this.deps.settings.maxIdChars);
    if (issues.length === 0) return undefined;
    return Promise.resolve(
      failedReply(callId, { code: 'invalid_arguments', message: invalidRequestMessage(issues), issues }),
    );
  }

  /**
   * A tool the caller's scopes do not allow: refused before anything is looked up or kept, the
   * same for a new call and for one that repeats an id (a retry reaches no call its caller could not make).
   */
  #scopeRefusal(request: CallRequest): Promise<CallReply> | undefined {
    const caller = request.caller;
    if (caller?.scopes === undefined) return undefined;
    const error = this.deps.access.scopeRefusal(caller, this.deps.tools.get(request.name));
    return error && Promise.resolve(failedReply(request.callId ?? '', error));
  }

  /** The reply of a call this runtime holds: live, or ended and not yet written. */
  #known(callId: string): Promise<CallReply> | undefined {
    const { registry, settings, tools } = this.deps;
    const live = registry.get(callId);
    if (live) return live.reply;
    const ended = registry.heldEnded(callId);
    return (
      ended && Promise.resolve(replyOf(ended.record, settings.forTool(tools.get(ended.record.toolName))))
    );
  }

  /** The reply of a call made before with this id (the model's own id makes a retry harmless). */
  #existing(callId: string): Promise<CallReply | undefined> {
    const known = this.#known(callId);
    if (known) return known;
    let lookup = this.#lookups.get(callId);
    if (!lookup) {
      const { store, repeated } = this.deps;
      // A lookup that fails is a reply too: without it, running the call could run it twice.
      lookup = store
        .getCall(callId)
        .then((record) => record && repeated.reply(record), notSavedReply(callId));
      this.#lookups.set(callId, lookup);
      const forget = () => this.#lookups.delete(callId);
      lookup.then(forget, forget);
    }
    return lookup;
  }

  /** The tool exists and the arguments fit its schema. */
  #validate(
    request: CallRequest,
    callId: string,
    createdAt: number,
    batch: CallBatch | undefined,
    run?: RunLabel,
  ): Promise<CallReply> {
    // Another call with this id may have been admitted, or even ended, while its lookup was under way.
    const known = this.#known(callId);
    if (known) return known;
    const { settings, tools } = this.deps;
    const checked = checkArguments(request.args, settings.argumentLimits);
    // Refused arguments are kept on the refusal's record only when every store can keep them.
    const refusedArgs = checked.ok || checked.storable ? request.args : undefined;
    const tool = tools.get(request.name);
    if (!tool) {
      const error: RecordedError = {
        code: 'tool_not_found',
        message: toolNotFoundMessage(request.name, tools.names()),
      };
      return this.#refuse(request, callId, createdAt, refusedArgs, error, batch);
    }
    if (!checked.ok) {
      const message = invalidArgumentsMessage(tool.name, checked.issues);
      const error: RecordedError = { code: 'invalid_arguments', message, issues: checked.issues };
      return this.#refuse(request, callId, createdAt, refusedArgs, error, batch);
    }
    // The schema's parse fills in `args`. Methods from here on, not closures: this runs per call.
    const rawArgs = checked.args;
    const admitted: Admitted = { tool, request, run, callId, createdAt, rawArgs, args: undefined, batch };
    const validated = tool.validateInput(checked.args);
    return validated instanceof Promise
      ? validated.then((result) => this.#validated(admitted, result))
      : this.#validated(admitted, validated);
  }

  /** The schema's verdict; then the limits, and `prepare`. */
  #validated(admitted: Admitted, result: ValidationResult): Promise<CallReply> {
    const { tool, request, run } = admitted;
    if (!result.ok) {
      const message = invalidArgumentsMessage(tool.name, result.issues);
      return this.#refuseAdmitted(admitted, { code: 'invalid_arguments', message, issues: result.issues });
    }
    const refusal = this.#limitRefusal(this.deps.settings.modeOf(tool, run !== undefined), request.sessionId);
    if (refusal) return this.#refuseAdmitted(admitted, { code: 'limit_exceeded', message: refusal });
    admitted.args = result.value;
    return this.#prepare(admitted);
  }

  /**
   * The durable context: `prepare` runs before the call is queued, then `needsApproval` decides whether it
   * waits for an approval; if either fails, the call ends without running.
   */
  #prepare(admitted: Admitted): Promise<CallReply> {
    const { tool, request, callId, args } = admitted;
    if (!tool.prepare) return this.#admitPrepared(admitted, undefined);
    const prepare = tool.prepare;
    const context = new PrepareInputs(request, callId, tool.name);
    return runHook(
      () => prepare(args as never, context),
      (given) => this.#admitPrepared(admitted, given),
      // What prepare asked for and did not get ends the request, whatever prepare made of it.
      (thrown) =>
        context.asked
          ? Promise.resolve(context.inputRequired(callId))
          : this.#refuseAdmitted(admitted, thrownOutcome(thrown).error),
    );
  }

  /** What `prepare` gave is kept with the call; then `needsApproval` decides how it is admitted. */
  #admitPrepared(admitted: Admitted, given: unknown): Promise<CallReply> {
    // The prepared value is kept on the record: one no store can keep fails this call alone.
    let prepared: unknown;
    try {
      prepared = storableValue(given);
    } catch (cause) {
      const message = persistenceFailedMessage(
        new Error(notJsonMessage('the value prepare() returned', cause)),
      );
      const { request, callId, createdAt, batch } = admitted;
      const error: RecordedError = { code: 'persistence_failed', message };
      return this.#refuse(request, callId, createdAt, undefined, error, batch);
    }
    const needs = admitted.tool.execution.needsApproval;
    if (typeof needs !== 'function') return this.#withinQuota(admitted, prepared, needs === true);
    return runHook(
      () => needs(admitted.args as never),
      (awaitingApproval) => this.#withinQuota(admitted, prepared, awaitingApproval),
      (thrown) => this.#refuseAdmitted(admitted, thrownOutcome(thrown).error),
    );
  }

  /**
   * One call of the caller's quota, taken once the call would be accepted (its arguments valid,
   * `prepare` satisfied): a call refused for its own faults counts for nothing. Past it, nothing is kept.
   */
  #withinQuota(admitted: Admitted, prepared: unknown, awaitingApproval: boolean): Promise<CallReply> {
    const { access } = this.deps;
    if (!access.hasQuota) return this.#admit(admitted, prepared, awaitingApproval);
    return access.takeQuota(admitted.request.caller ?? TRUSTED_CALLER).then(
      (refusal) =>
        refusal ? failedReply(admitted.callId, refusal) : this.#admit(admitted, prepared, awaitingApproval),
      // A quota that could not be read (its count is in the store, away): the call is not kept, and
      // its caller is told so, as for a store that refuses its first write; `call` never rejects.
      (error: unknown) =>
        failedReply(admitted.callId, {
          code: 'persistence_failed',
          message: persistenceFailedMessage(error),
        }),
    );
  }

  /** A request that passed the checks of its ids, tool and arguments is refused: its arguments are kept. */
  #refuseAdmitted(admitted: Admitted, error: RecordedError): Promise<CallReply> {
    const { request, callId, createdAt, rawArgs, batch } = admitted;
    return this.#refuse(request, callId, createdAt, rawArgs, error, batch);
  }

  /** Where waiting makes no sense, a call past a limit is refused with words that tell the model what to do. */
  #limitRefusal(mode: string, sessionId: string): string | undefined {
    const { settings, registry, slots } = this.deps;
    const { backgroundPerSession, backgroundPerWorker, maxQueued } = settings.limits;
    if (mode === 'background') {
      if (registry.backgroundIn(sessionId) >= backgroundPerSession)
        return backgroundPerSessionMessage(backgroundPerSession);
      if (registry.backgroundTotal >= backgroundPerWorker)
        return backgroundPerWorkerMessage(backgroundPerWorker);
    }
    if (slots.waiting >= maxQueued) return queueFullMessage(maxQueued);
    return undefined;
  }

  /** The call is accepted: its record and its actor, then the machine admits it (a slot, the queue, or its approval). */
  #admit(
    { tool, request, run, callId, createdAt, rawArgs, args, batch }: Admitted,
    prepared: unknown,
    awaitingApproval: boolean,
  ): Promise<CallReply> {
    const { settings, registry, writes } = this.deps;
    // The runtime began to close while the request was on its way in (its id looked up, its hooks
    // run): its drain decided what to wait for without this call, so nothing of it is kept.
    if (this.deps.closed()) return Promise.resolve(closedReply(callId));
    const mode = settings.modeOf(tool, run !== undefined);
    const record: CallRecord = {
      callId,
      sessionId: request.sessionId,
      toolName: tool.name,
      args: rawArgs,
      status: 'queued',
      mode,
      detached: false,
      attempt: 0,
      ownerId: settings.instanceId,
      createdAt,
      outputTail: '',
    };
    if (request.messageId !== undefined) record.messageId = request.messageId;
    if (request.notifyAfterMs !== undefined) record.notifyAfterMs = notifyTimes(request.notifyAfterMs);
    if (prepared !== undefined) record.prepared = prepared;
    if (awaitingApproval) record.approval = 'pending';
    const trace = this.deps.tracing?.carrier();
    if (trace) record.trace = trace;
    if (run) record.run = run;
    const caller = keptCaller(request.caller);
    if (caller) record.caller = caller;
    if (settings.role === 'client') return this.deps.submit(tool, record);
    const call = registry.create({ record, tool, args });
    writes.emit(call, { type: 'queued', mode, to: 'queued' });
    if (batch) {
      call.batch = batch;
      batch.calls.push(call);
    }
    // The caller's own id, on a store that processes share: the same request may reach another
    // process at the same time (a load balancer's retry). The call runs here once it is stored as
    // this process's, never while another runs it.
    if (request.callId !== undefined && this.deps.store.listen) {
      return this.deps.writer.recordNew(record).then(
        () => this.#admitted(call),
        (error: unknown) => this.#notMadeHere(call, error),
      );
    }
    if (request.callId === undefined) writes.saveFirst(call);
    else writes.save(call);
    return this.#admitted(call);
  }

  /** The machine admits the call (a slot, the queue, or its approval), unless its batch failed. */
  #admitted(call: LiveCall): Promise<CallReply> {
    const { batch } = call;
    if (batch?.failure) {
      this.deps.send(call, { type: 'CANCEL', reason: batch.failure });
      return call.reply;
    }
    this.deps.send(call, { type: 'ADMIT' });
    return call.reply;
  }

  /**
   * The store refused the first record of a call made here: made elsewhere under the same id at
   * the same time, it is that call, and this copy goes, having written nothing; else it was not
   * kept (`persistence_failed`), and the id may be used again.
   */
  async #notMadeHere(call: LiveCall, error: unknown): Promise<CallReply> {
    const { registry, repeated } = this.deps;
    const { callId } = call.record;
    const elsewhere = await repeated.madeElsewhere(callId, error);
    // Never admitted, it writes nothing: the id stays the other call's, or free to use again.
    call.dropped = true;
    registry.release(call);
    return elsewhere ? repeated.reply(elsewhere) : notSavedReply(callId)(error);
  }

  /** Refused calls leave a record too (ended `failed`, never run), so that nothing asked for is unaccounted. */
  #refuse(
    request: CallRequest,
    callId: string,
    createdAt: number,
    args: unknown,
    error: RecordedError,
    batch: CallBatch | undefined,
  ): Promise<CallReply> {
    const { writes, writer } = this.deps;
    const record = refusedRecord(request, callId, createdAt, args, error);
    writer.add(
      'events',
      writes.stamp({ type: 'failed', error: modelVisible(error), to: 'failed' }, record, 1),
    );
    failBatch(batch, record, this.deps.send);
    return writer.recordNew(record).then(
      () => replyOf(record, this.deps.settings.forTool(undefined)),
      (error: unknown) => this.deps.repeated.afterRefusal(callId, error),
    );
  }
}
