import type { Notification, Scheduling } from '@baton/contracts';
import type { Subscription } from 'rxjs';
import type { Runtime } from '../runtime-api.js';

/**
 * What a push bridge supplies: the live conversation results are put into (a voice session). The
 * delivery decides when; the target only knows its platform.
 */
export interface PushTarget {
  /**
   * Whether no one is speaking now (the model's turn is over, the user is quiet): `when_idle`
   * results wait for it. Leave it out where the platform schedules them itself (Gemini Live).
   */
  isIdle?(): boolean;
  /** Whether there is a connection to put results on. Leave it out for one that is always there. */
  isConnected?(): boolean;
  /**
   * Puts results into the conversation, all of one scheduling: `interrupt` stops what the model
   * says and has it answer now, `when_idle` has it answer, `silent` adds them to its context with
   * no response. Throws (or rejects) when they could not be put: they are kept for the next send.
   */
  put(results: readonly Notification[], scheduling: Scheduling): void | Promise<void>;
}

export interface PushDeliveryOptions {
  sessionId: string;
  target: PushTarget;
  /** A result that could not be put (it is kept), or a read of the store that failed. */
  onError?: (error: unknown) => void;
}

/** A push bridge's delivery: it watches the session and puts each result into the target once. */
export interface PushDelivery {
  /** The target became idle: the `when_idle` results waiting for it go, and those kept after a failed send. */
  idle(): Promise<void>;
  /** The target has a connection (again): the results not yet put go, first those that ended while it had none. */
  connected(): Promise<void>;
  /** The connection dropped: the results not yet put wait in the store for `connected`. */
  disconnected(): void;
  /** Stops watching; the results not yet put wait in the store for the next delivery of the session. */
  close(): void;
}

/**
 * Watches a session's results and puts each into the target once, by its scheduling: `interrupt`
 * and `silent` ones as they come, `when_idle` ones once the target is idle (those that wait go in
 * together). A result is acknowledged only after its put succeeded; a put that throws keeps it for
 * the next send, and one that comes while there is no connection waits in the store.
 */
export function pushDelivery(
  runtime: Pick<Runtime, 'notifications'>,
  { sessionId, target, onError = (error) => console.error(error) }: PushDeliveryOptions,
): PushDelivery {
  const { notifications } = runtime;
  /** `when_idle` results waiting for the target to be idle. */
  let waiting: Notification[] = [];
  /** Results whose put failed: the next send puts them first. */
  let kept: Notification[] = [];
  const idleNow = () => target.isIdle?.() ?? true;
  const connectedNow = () => target.isConnected?.() ?? true;

  const put = async (results: Notification[], scheduling: Scheduling): Promise<void> => {
    if (results.length === 0) return;
    try {
      await target.put(results, scheduling);
    } catch (error) {
      kept = [...kept, ...results];
      onError(error);
      return;
    }
    await Promise.all(results.map((result) => notifications.ack(result.id)));
  };
  /** Puts what is due now, by scheduling; `when_idle` ones wait while the target is not idle. */
  const send = async (results: readonly Notification[]): Promise<void> => {
    const due = [...kept, ...results];
    kept = [];
    const of = (scheduling: Scheduling) => due.filter((result) => result.scheduling === scheduling);
    const whenIdle = [...waiting, ...of('when_idle')];
    waiting = [];
    await put(of('interrupt'), 'interrupt');
    await put(of('silent'), 'silent');
    if (idleNow()) await put(whenIdle, 'when_idle');
    else waiting = [...waiting, ...whenIdle];
  };
  /**
   * Holds for this runtime what is queued and held by no one (not what waits here, nor what another
   * delivery of the session holds, in this process or another), and sends it.
   */
  const sendHeld = async (): Promise<void> => {
    if (connectedNow()) await send(await notifications.hold({ sessionId, idle: true }));
  };

  const watching: Subscription = notifications.watch({ sessionId }).subscribe({
    // Another delivery of the session may hold it already: the hold gives each result to one.
    next: () => void sendHeld().catch(onError),
    error: onError,
  });
  /** Lets go of what was not put: it waits in the store, for the next connection or delivery. */
  const letGoUnsent = () => {
    const unsent = [...waiting, ...kept];
    waiting = [];
    kept = [];
    if (unsent.length > 0) notifications.release(unsent.map((result) => result.id)).catch(onError);
  };
  return {
    idle: () => (connectedNow() ? send([]) : Promise.resolve()),
    connected: sendHeld,
    disconnected: letGoUnsent,
    close() {
      watching.unsubscribe();
      letGoUnsent();
    },
  };
}
