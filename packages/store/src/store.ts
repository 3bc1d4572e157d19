import type {
  Artifact,
  CallEvent,
  CallRecord,
  CallStatus,
  DeliveryStatus,
  EventResolution,
  Notification,
  NotificationStatus,
  RuntimeInstance,
  Schedule,
  Scheduling,
  StepResult,
  WebhookDelivery,
} from '@baton/contracts';

/** One atomic write: everything in it is stored, or nothing is. */
export interface StoreWrite {
  /** Whole records, inserted or replaced by `callId`. */
  calls?: readonly CallRecord[];
  /**
   * The calls among `calls` that this write makes: one whose id a stored call has already (the
   * same id sent to two processes at once) is refused, and the write with it, unless its record
   * is the one stored (this write made again).
   */
  newCalls?: readonly string[];
  /**
   * The calls among `calls` whose first record this is, under an id the runtime made up (no one
   * else has it): a store may insert them without first looking for one stored under the same id.
   * Only a hint: such a store finds them stored only when this write is made again (its answer
   * was lost), and must then take it as it would without the hint.
   */
  firstRecords?: readonly string[];
  events?: readonly CallEvent[];
  /** New notifications. */
  notifications?: readonly Notification[];
  /**
   * New webhook deliveries, each of a notification: kept only with their notification (a store
   * that fences writes and refuses the notification refuses its delivery too).
   */
  deliveries?: readonly WebhookDelivery[];
  /** Files of background runs, inserted or replaced by call and name. */
  artifacts?: readonly Artifact[];
  /** Finished durable steps, inserted or replaced by call and step id. */
  steps?: readonly StepResult[];
  /** External events resolved from outside, by key; the first resolution of a key stands. */
  resolutions?: readonly EventResolution[];
  /** Schedules, inserted or replaced by id. */
  schedules?: readonly Schedule[];
  /**
   * The runtime instance that writes. A store shared by machines fences with it: the rows of a
   * call another instance now owns (or a record of an earlier attempt) are not written.
   */
  writer?: string;
}

/** The connections a store holds to its database, for an operator: in use, idle, and asked for. */
export interface StoreConnections {
  /** Checked out for a query or a transaction. */
  inUse: number;
  idle: number;
  /** Queries waiting for a connection: the pool is full. */
  waiting: number;
}

/** The calls waiting for a worker to claim them, and when the oldest was made (none waits: undefined). */
export interface QueueDepth {
  calls: number;
  oldestCreatedAt: number | undefined;
}

/** A call a worker claimed, with the `seq` of its last stored event (its next event follows it). */
export interface ClaimedCall {
  record: CallRecord;
  lastSeq: number;
  /** The requests sent for it (`send`) before it was claimed, oldest first: a store that keeps them. */
  requests?: CallControl[];
}

/** What a store shared by processes tells each of them about the others' commits. */
export type StoreNotice =
  /**
   * Events of these calls were stored; `writer` is the `StoreWrite.writer` that stored them, so a
   * runtime can skip its own writes, which its bus has already told of. On the `replies` topic, a
   * store may hold in `records` the records of those calls, as stored: the client that waits for
   * them has its answers without reading them back (it reads the others).
   */
  | { type: 'events'; callIds: string[]; sessionIds: string[]; writer?: string; records?: CallRecord[] }
  /** A call waits for a worker to claim it. */
  | { type: 'queued' }
  /** A request for the instance that runs a call. */
  | CallControl
  /**
   * The listener hears its topic from now on (first, and again after a lost connection): what was
   * stored before may have gone untold, so read it again.
   */
  | { type: 'listening' };

/**
 * What a listener hears of, so that a process is woken only by what concerns it:
 * - `work`: queued calls and requests (`queued`, `control`), for the processes that run calls;
 * - `events`: the events of every call (`events`), for those that follow calls or sessions;
 * - `replies`: the calls whose `replyTo` is `to` that were detached or ended, for that client
 *   (`events`, with their records where they fit).
 * Each topic also brings `listening`. A store may tell a listener more than its topic.
 */
export type NoticeTopic = { type: 'work' } | { type: 'events' } | { type: 'replies'; to: string };

export interface CallControl {
  type: 'control';
  callId: string;
  /**
   * `detach`: the caller stops waiting (the process it asked through stops): the call goes on,
   * detached, and its end becomes a notification. `resolved`: an external event of the call (`key`)
   * was resolved in another process: a wait for it reads it (a message sent to the call, say).
   */
  action: 'cancel' | 'approve' | 'reject' | 'detach' | 'resolved';
  reason?: string;
  /** `resolved`: the key of the event. */
  key?: string;
}

export interface CallFilter {
  sessionId?: string;
  /** Only sessions whose id starts with this (a server keeps each tenant's sessions under a prefix). */
  sessionPrefix?: string;
  status?: CallStatus | readonly CallStatus[];
  toolName?: string;
  /** At most this many records per page (default 100). */
  limit?: number;
  /** The `nextCursor` of the previous page. */
  cursor?: string;
}

export interface CallPage {
  /** Newest first. */
  calls: CallRecord[];
  /** Set when there are more. */
  nextCursor?: string;
}

export interface NotificationFilter {
  /** Only the notification with this id. */
  id?: string;
  sessionId?: string;
  sessionPrefix?: string;
  status?: NotificationStatus;
  /** At most this many, oldest first. Default: all. */
  limit?: number;
  /** Only those after the notification with this id (the last of the previous page); none when it is unknown. */
  after?: string;
}

/** Which webhook deliveries to list: newest first. */
export interface DeliveryFilter {
  status?: DeliveryStatus;
  sessionId?: string;
  sessionPrefix?: string;
  callId?: string;
  /** At most this many (default 100). */
  limit?: number;
}

/** What `countDeliveries` counts by. */
export type DeliveryCountFilter = Pick<DeliveryFilter, 'status' | 'sessionPrefix'>;

/** Which notifications `holdNotifications` holds, and for whom. */
export interface NotificationHold {
  sessionId: string;
  /** Only those of these schedulings (those due at the loop's step). */
  schedulings: readonly Scheduling[];
  /** The runtime instance that holds them: its holds lapse once it is no longer registered. */
  holder: string;
}

/** What `countNotifications` counts by. */
export type NotificationCountFilter = Pick<NotificationFilter, 'sessionId' | 'sessionPrefix' | 'status'>;

/** An event with its place in the store's write order, which a session stream resumes from. */
export interface SessionEvent {
  /** Greater than the position of every event stored before it; never 0. */
  position: number;
  event: CallEvent;
}

/** Writing: a batch at once, and what the store says of itself to the writer. */
export interface StoreWrites {
  /**
   * Writes a batch atomically. It must take what it keeps from the batch before it returns (copy
   * or serialise it synchronously): the caller goes on changing those objects afterwards.
   */
  write(batch: StoreWrite): Promise<void>;
  /**
   * How many writes the store takes at once to advantage, each atomic on its own (a store with a
   * round trip per write, and connections to spare). The runtime keeps one call's writes in order
   * and sends those of different calls side by side. One when absent.
   */
  readonly writeConcurrency?: number;
  /**
   * At most this many calls' rows in one write. A runtime that runs the calls it writes then cuts
   * a tick's changes into batches (each call's rows of the tick in one) of about a quarter of its
   * calls in flight, at least 100 and at most this, so that a store with a round trip writes one
   * while the runtime runs the calls of the next. No cut when absent.
   */
  readonly writeBatchCalls?: number;
  /**
   * What the store keeps outlives this process (a file, a database server): a runtime that closes
   * leaves the calls it still runs to its next start or to another process, rather than ending
   * them. Absent: kept in memory only.
   */
  readonly outlivesProcess?: boolean;
  /**
   * Whether an error this store threw means that it could not be reached (a database restarting,
   * a lost connection, a lock held too long), so that the same request may work again shortly;
   * not that it refused what it was asked. The runtime rides such errors out for a while
   * (`storeRetryMs`). Absent: no error is.
   */
  isUnavailable?(error: unknown): boolean;
}

/** Reading calls: their records, their events, a session's events. */
export interface StoreReads {
  getCall(callId: string): Promise<CallRecord | undefined>;
  /** The records of these calls that exist, in any order: one read for many (a client's replies). */
  getCalls(callIds: readonly string[]): Promise<CallRecord[]>;
  listCalls(filter?: CallFilter): Promise<CallPage>;
  /** A call's events with `seq >= fromSeq`, in order; at most `limit` of them when it is given. */
  listEvents(callId: string, fromSeq?: number, limit?: number): Promise<CallEvent[]>;
  /**
   * The events of every call of a session stored after `afterPosition`, in the order they were
   * stored: write by write, each call's in the order of its seqs (within one write, a store may
   * keep the order given or group the events by call).
   */
  listSessionEvents(sessionId: string, afterPosition?: number, limit?: number): Promise<SessionEvent[]>;
}

/** The notifications of calls that ended in the background: read, counted, held by one loop, acknowledged. */
export interface StoreNotifications {
  /** Oldest first, so that a session takes its results in the order they came. */
  listNotifications(filter?: NotificationFilter): Promise<Notification[]>;
  /** How many notifications match (for a gauge of those not yet acknowledged). */
  countNotifications(filter?: NotificationCountFilter): Promise<number>;
  /** False when there is no such notification or it was already acknowledged. */
  acknowledgeNotification(id: string, at: number): Promise<boolean>;
  /**
   * Atomically holds for `holder` the session's queued notifications of these schedulings that no
   * registered instance holds, and returns them, oldest first: a result is given by one loop at a
   * time, whatever process it runs in, and again by another once its holder is gone (a process
   * that died before its model saw it). A hold ends with `acknowledgeNotification`, or with
   * `releaseNotifications`.
   */
  holdNotifications(hold: NotificationHold): Promise<Notification[]>;
  /** Ends `holder`'s holds of these notifications without acknowledging them: they are due again. */
  releaseNotifications(ids: readonly string[], holder: string): Promise<void>;
}

/** Webhook deliveries: claimed for an attempt by one process, settled, listed. */
export interface StoreDeliveries {
  /**
   * Takes up to `limit` pending webhook deliveries that are due at `now` and that no process holds
   * (or whose hold lapsed), oldest due first, and holds each for `ownerId` until `now + leaseMs`:
   * with many processes on one store, each attempt is made by one of them.
   */
  claimDeliveries(ownerId: string, now: number, leaseMs: number, limit: number): Promise<WebhookDelivery[]>;
  /**
   * Keeps a claimed delivery as its attempt left it (status, attempts, next try, last attempt) and
   * lets it go. False when `ownerId` no longer holds it (its hold lapsed and another took it).
   */
  settleDelivery(delivery: WebhookDelivery, ownerId: string): Promise<boolean>;
  /** Newest first. */
  listDeliveries(filter?: DeliveryFilter): Promise<WebhookDelivery[]>;
  countDeliveries(filter?: DeliveryCountFilter): Promise<number>;
}

/** What a call keeps beside its record: its artifacts, its durable steps, the resolutions of what it waits for. */
export interface StoreCallFiles {
  getArtifact(callId: string, name: string): Promise<string | undefined>;
  /** The names of a call's artifacts. */
  listArtifacts(callId: string): Promise<string[]>;
  /** The finished durable steps of a call. */
  listSteps(callId: string): Promise<StepResult[]>;
  getResolution(key: string): Promise<EventResolution | undefined>;
}

/** Schedules (the background runs): listed, and each firing claimed by one runtime. */
export interface StoreSchedules {
  listSchedules(filter?: { sessionId?: string; enabled?: boolean }): Promise<Schedule[]>;
  /**
   * Claims the firing of a schedule due at `dueAt`: moves it on to `next` only if it is still
   * enabled and still due then. True for the one claimer that did; with many runtimes on one store,
   * each firing happens once.
   */
  claimFiring(
    scheduleId: string,
    dueAt: number,
    next: { nextAt?: number; enabled: boolean },
  ): Promise<boolean>;
}

/** Retention: ended calls removed with what they kept. */
export interface StoreRetention {
  /**
   * Removes calls that ended before `time`, at most `limit` of them when it is given, with their
   * events, artifacts, steps, resolutions, acknowledged notifications (a notification not yet
   * acknowledged stays) and settled webhook deliveries (a pending one stays); returns how many
   * calls. A store may find them by creation (a call ended before a time was created before it):
   * where the clocks of the processes that create and end a call disagree, its removal waits by
   * as much.
   */
  deleteEndedBefore(time: number, limit?: number): Promise<number>;
}

/** Instances and claims: the processes on a store, and the calls each of them runs. */
export interface StoreInstances {
  /** Records (or refreshes) a runtime instance. */
  registerInstance(instance: RuntimeInstance): Promise<void>;
  /** False when the instance is not registered (any more): its calls may have gone to others. */
  heartbeat(instanceId: string, at: number): Promise<boolean>;
  listInstances(): Promise<RuntimeInstance[]>;
  /** Forgets an instance that closed cleanly. */
  removeInstance(instanceId: string): Promise<void>;
  /**
   * Atomically gives the unfinished calls of gone instances to `ownerId` and forgets those
   * instances. Returns the calls it took (with their new owner): a call another claimer took
   * first is not returned, so each is recovered once.
   */
  claimCalls(goneInstanceIds: readonly string[], ownerId: string): Promise<CallRecord[]>;
  /**
   * Atomically gives `ownerId` up to `limit` queued calls that no instance owns, oldest first and
   * not those waiting for approval; or, with `callId`, that call (to act on it, even if it waits
   * for approval). Each is given to one claimer.
   */
  claimQueued(ownerId: string, limit: number, callId?: string): Promise<ClaimedCall[]>;
  /**
   * The calls waiting for a worker (those `claimQueued` would give, in any number), and when the
   * oldest of them was made: how far behind the workers are, for an operator.
   */
  queueDepth(): Promise<QueueDepth>;
  /** The connections of a store that keeps a pool of them (PostgreSQL), at this moment. */
  connections?(): StoreConnections;
  /**
   * The unfinished calls that `ownerId` holds, with the `seq` of each one's last event. A claim
   * whose answer was lost on the way (the connection dropped after the commit) leaves calls held
   * by an instance that does not know it holds them: it asks this after an outage, and takes
   * them up. A store that cannot lose an answer may leave it out.
   */
  heldBy?(ownerId: string): Promise<ClaimedCall[]>;
}

/** Notices, for stores that several processes share: what each commits, and requests for a call's runner. */
export interface StoreNotices {
  /**
   * Stores that several processes share: hears what the processes commit on a topic, this one's
   * writes included (an `events` notice names its writer). Runtimes on such a store can split into
   * clients and workers.
   */
  listen?(listener: (notice: StoreNotice) => void, topic: NoticeTopic): () => void;
  /**
   * Sends a request to the instance that runs a call (every listener of `work` hears it), and keeps
   * it, for `requestsFor`, until the call is removed.
   */
  send?(control: CallControl): Promise<void>;
  /**
   * The requests sent for these calls, oldest first: a process reads those it may not have heard
   * (its LISTEN was down, or it took the calls over from another).
   */
  requestsFor?(callIds: readonly string[]): Promise<CallControl[]>;
}

/**
 * Where Baton keeps every call, its events and its notifications: each role an interface of its own,
 * so that a module takes only the role it uses (`Pick<>` of one) and a store is written role by
 * role. Adapters (memory, SQLite, PostgreSQL) must pass the conformance suite of
 * `@baton/store/testing`, one file per role.
 */
export interface Store
  extends StoreWrites,
    StoreReads,
    StoreNotifications,
    StoreDeliveries,
    StoreCallFiles,
    StoreSchedules,
    StoreRetention,
    StoreInstances,
    StoreNotices {
  close(): Promise<void>;
}

export const DEFAULT_PAGE_SIZE = 100;
