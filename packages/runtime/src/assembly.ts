import type { EventBus } from '@baton/bus';
import { BatonError, type CallEvent, type ToolRegistry } from '@baton/contracts';
import { type CallControl, memoryStore, type Store } from '@baton/store';
import type { Observable } from 'rxjs';
import { Access } from './access.js';
import { SPAWN_BACKGROUND } from './builtin-names.js';
import { ScheduleRunner } from './builtins/schedules.js';
import { type StartRun, spawnBackgroundTool, startRun } from './builtins/spawn-background.js';
import { Admission } from './call/admission.js';
import { Answers } from './call/answers.js';
import { Attempts } from './call/attempts.js';
import { CallContextHost } from './call/context-host.js';
import { CallDriver } from './call/driver.js';
import { callEffects } from './call/effects.js';
import { CallEnding } from './call/ending.js';
import { Intake } from './call/intake.js';
import { CallNotifications } from './call/notifications.js';
import { CallRegistry } from './call/registry.js';
import { RepeatedCalls } from './call/repeated.js';
import { Slots } from './call/slots.js';
import { Timers } from './call/timers.js';
import { CallTracing } from './call/tracing.js';
import { CallUpdates } from './call/updates.js';
import { CallWrites } from './call/writes.js';
import { type Clock, systemClock } from './clock.js';
import { EVENT_REREAD_FIRST_MS, EVENT_REREAD_MOST_MS } from './defaults.js';
import { Following } from './following.js';
import { Housekeeping } from './housekeeping.js';
import { LateBound } from './late-bound.js';
import { acknowledgeGivenEnd } from './ledger/given.js';
import { Failures, quietLogger } from './log.js';
import type { RuntimeOptions, StoreWriteTiming } from './options.js';
import { thisInstance } from './recovery/instances.js';
import { Recovery } from './recovery/recover.js';
import { ridingOut, StoreOutage } from './ride-out.js';
import { resolveSettings, type Settings } from './settings.js';
import { SharedClient } from './shared/client.js';
import { Peers } from './shared/peers.js';
import { tellingOwner } from './shared/tell-owner.js';
import { SharedWorker } from './shared/worker.js';
import { WebhookDeliveries } from './webhooks/deliveries.js';
import { WriteBatcher } from './write-batcher.js';

/** The modules of one runtime, each given only what it uses of the others. */
export interface RuntimeParts {
  settings: Settings;
  /** What each caller may see, call and start. */
  access: Access;
  store: Store;
  clock: Clock;
  failures: Failures;
  writer: WriteBatcher;
  timers: Timers;
  registry: CallRegistry;
  slots: Slots;
  driver: CallDriver;
  intake: Intake;
  host: CallContextHost;
  following: Following;
  worker: SharedWorker;
  /** The client role's submissions and the replies it waits for. */
  client: SharedClient;
  /** The callers who repeat the id of a call another process runs, waiting here for its answer. */
  repeated: RepeatedCalls;
  /** What the other processes on the store speak. */
  peers: Peers;
  recovery: Recovery;
  schedules: ScheduleRunner;
  housekeeping: Housekeeping;
  /** Webhook deliveries, when the runtime has `webhooks`. */
  webhooks: WebhookDeliveries | undefined;
  /** The registration of this instance in the store: everything written waits for it. */
  registered: Promise<void>;
  /** Resolves once a client hears its replies' notices, or a worker the requests for its calls. */
  listening: Promise<void>;
  /** Stops hearing the shared store's notices (the runtime closes). */
  stopListening: () => void;
}

/** What the assembly needs of the runtime object itself. */
export interface RuntimeHooks {
  tools: ToolRegistry;
  bus: EventBus;
  closed: () => boolean;
  /** The drain is over: what still runs is being handed over, and no attempt is retried. */
  stopping: () => boolean;
  /** Told how long each of the store's writes took (`storeWrites$`). */
  timed: (timing: StoreWriteTiming) => void;
  /** The runtime's cancel, approve and reject, for requests another process sends. */
  control: (control: CallControl) => Promise<boolean>;
}

/** Builds the modules of a runtime from its options. Throws `invalid_definition` for a bad option, before anything is stored. */
export function assembleRuntime(options: RuntimeOptions, hooks: RuntimeHooks): RuntimeParts {
  const { tools, bus, closed } = hooks;
  const given = options.store ?? memoryStore();
  const clock = options.clock ?? systemClock;
  const settings = resolveSettings(options, given);
  const access = new Access(options.access);
  const failures = new Failures(
    options.logger ?? quietLogger,
    (failure) => bus.publishFailure(failure),
    () => clock.now(),
  );
  const outage = new StoreOutage(given, settings.storeRetryMs, clock, failures);
  const store = ridingOut(given, outage);
  const housekeeping = new Housekeeping(clock, failures, (error) => given.isUnavailable?.(error) === true);
  const timers = new Timers(clock);
  const registry = new CallRegistry(settings);
  const driver = new CallDriver();
  const send = driver.send;
  // Every option is valid by now: only then does the runtime announce itself in the store.
  const registered = store.registerInstance(thisInstance(settings.instanceId, clock.now(), settings.holdMs));
  // Reached once, the store is ridden out when it goes away; at start, its error is told at once.
  registered.then(
    () => outage.reached(),
    () => {},
  );
  const late = new LateBound<{
    ending: CallEnding;
    worker: SharedWorker;
    recovery: Recovery;
    client: SharedClient;
  }>();
  const writer = new WriteBatcher({
    store,
    publish: (event) => bus.publish(event),
    failed: (refused) => late.get('ending').refused(refused),
    after: registered,
    writer: settings.instanceId,
    timed: hooks.timed,
    // A client or a worker alone hands its writes to another process: see WriteBatcher's option.
    pipelined: settings.role === 'both',
    // Every call not yet answered, those whose end waits for its write too: a batch is a share of them.
    liveCalls: () => registry.inFlight,
    outage,
  });
  const tracing = CallTracing.load();
  const writes = new CallWrites(writer, clock, tracing);
  const { concurrency, runningPerSession, runningPerTenant } = settings.limits;
  const admission = new Admission({
    concurrency,
    runningPerSession,
    runningPerTenant,
    tenantOf: settings.tenantOf,
  });
  const slots = new Slots({ admission, send, clock, freed: () => late.get('worker').freed() });
  const following = new Following({
    bus,
    store,
    timers,
    pollMs: settings.pollMs,
    instanceId: settings.instanceId,
  });
  const { progressIntervalMs, maxOutputChars } = settings;
  const logger = options.logger ?? quietLogger;
  const peers = new Peers({ store, instanceId: settings.instanceId, clock, logger, failures });
  const updates = new CallUpdates({
    writes,
    writer,
    timers,
    clock,
    store,
    failures,
    updateIntervalMs: settings.updateIntervalMs,
  });
  const host = new CallContextHost({
    writes,
    writer,
    store,
    timers,
    clock,
    failures,
    updates,
    progressIntervalMs,
    ...(store.send
      ? {
          tellOwner: tellingOwner(store, registry, failures),
          reread: { firstMs: EVENT_REREAD_FIRST_MS, mostMs: EVENT_REREAD_MOST_MS },
        }
      : {}),
  });
  // Checked with the other options, before anything is stored.
  const webhooks =
    options.webhooks &&
    new WebhookDeliveries({
      options: options.webhooks,
      store,
      clock,
      failures,
      logger: options.logger ?? quietLogger,
      instanceId: settings.instanceId,
      events$: bus.events$,
      every: (ms, op, task) => housekeeping.every(ms, op, task),
      later: housekeeping.later,
    });
  const notifications = new CallNotifications({ writes, writer, clock, webhooks, updates });
  const later = housekeeping.later;
  const ending = late.set(
    'ending',
    new CallEnding({
      writes,
      writer,
      store,
      registry,
      notifications,
      send,
      clock,
      failures,
      maxOutputChars,
      later,
      drop: (call, reply) => late.get('recovery').drop(call, reply),
    }),
  );
  driver.use(
    callEffects({
      answers: new Answers({ writes, writer, registry, clock }),
      attempts: new Attempts({
        writes,
        send,
        host,
        timers,
        clock,
        closed: hooks.stopping,
        tracing,
        startWritten: store.outlivesProcess ? writer : undefined,
        logger: options.logger ?? quietLogger,
      }),
      ending,
      notifications,
      slots,
      timers,
      writes,
      send,
      clock,
      updates,
    }),
  );
  const repeated: RepeatedCalls = new RepeatedCalls({
    settings,
    tools,
    store,
    follow: (callId) => following.follow({ callId }) as Observable<CallEvent>,
    clock,
    failures,
    detachUnclaimed: (callId): Promise<boolean> => late.get('client').detachUnclaimed(callId),
    endGiven: (record) =>
      acknowledgeGivenEnd(
        {
          list: (filter) => store.listNotifications(filter),
          ack: (id) => store.acknowledgeNotification(id, clock.now()),
        },
        record,
      ),
  });
  const client = late.set(
    'client',
    new SharedClient({
      settings,
      writes,
      writer,
      store,
      following,
      timers,
      clock,
      failures,
      repeated,
    }),
  );
  const submit = client.submit.bind(client);
  // What the modules beside the journey share; each takes the part it declares.
  const common = {
    settings,
    tools,
    store,
    registry,
    slots,
    timers,
    writes,
    writer,
    send,
    clock,
    failures,
    closed,
  };
  const intake = new Intake({ ...common, access, submit, tracing, repeated });
  // Runs come in through the intake's own entry for them, not through the public `call`.
  const start: StartRun = (request, run) => intake.call(request, run);
  const schedules = schedulesOf(settings, { store, clock, writer, tools, access, failures, start });
  const recovery = late.set(
    'recovery',
    new Recovery({
      ...common,
      catchUp: (callIds) => late.get('worker').catchUp(callIds),
      peers,
      outage,
      retake: () => (settings.role === 'client' ? client.giveBackHeld() : late.get('recovery').retakeHeld()),
      exclusive: (work) => late.get('worker').exclusive(work),
      adopt: (claimed) => late.get('worker').adopt(claimed, true),
    }),
  );
  const worker = late.set(
    'worker',
    new SharedWorker({
      ...common,
      following,
      control: hooks.control,
      takeUp: recovery.takeUp,
      recover: recovery.recover,
      drop: (call) => recovery.drop(call),
    }),
  );
  // Queued calls and requests concern the processes that run calls; a client hears its replies
  // (see SharedClient) and, while it follows anything, the events of all (see Following).
  const stopWork =
    settings.role === 'client'
      ? undefined
      : store.listen?.((notice) => worker.hear(notice), { type: 'work' });
  // A client's calls are answered through its topic, and a worker hears the requests for the calls
  // it runs through its own: each is ready once it hears its topic.
  const listening = settings.role === 'client' ? client.listen() : worker.listening();
  const stopListening = () => {
    stopWork?.();
    client.close();
  };
  return {
    settings,
    access,
    store,
    clock,
    failures,
    writer,
    timers,
    registry,
    slots,
    driver,
    intake,
    host,
    following,
    worker,
    client,
    repeated,
    peers,
    recovery,
    schedules,
    housekeeping,
    webhooks,
    registered,
    listening,
    stopListening,
  };
}

/** The background runs' schedules, and its `spawn_background` tool when asked for. */
function schedulesOf(
  settings: Settings,
  parts: {
    store: Store;
    clock: Clock;
    writer: WriteBatcher;
    tools: ToolRegistry;
    access: Access;
    failures: Failures;
    start: StartRun;
  },
): ScheduleRunner {
  const { start } = parts;
  const runner = new ScheduleRunner({
    clock: parts.clock,
    store: parts.store,
    save: (schedule) => parts.writer.write('schedules', schedule),
    // A firing is a call of the schedule's caller: one its scopes or its quota refuse now is lost, and said.
    fire: async (schedule) => {
      const { error } = await startRun({ start }, schedule);
      if (error?.code === 'insufficient_scope' || error?.code === 'quota_exceeded') {
        parts.failures.report('fire a schedule', new BatonError(error.code, error.message));
      }
    },
    perSession: settings.limits.schedulesPerSession,
    failed: (op, error) => parts.failures.report(op, error),
  });
  if (settings.builtins.includes(SPAWN_BACKGROUND)) {
    const tool = spawnBackgroundTool({
      tools: parts.tools,
      access: parts.access,
      defaultMode: settings.defaultMode,
      start,
      schedules: runner,
    });
    parts.tools.register(tool);
  }
  return runner;
}
