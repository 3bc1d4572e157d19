import { isDueAt, type Notification } from '@baton/contracts';
import type { Runtime } from '../runtime-api.js';

type Notifications = Pick<Runtime['notifications'], 'list' | 'ack'>;

/**
 * The results held by a loop of this process, not yet in its conversation: another loop of the
 * same session does not take them meanwhile. Kept per runtime.
 */
const heldByRuntime = new WeakMap<Notifications, Set<string>>();

function heldIn(notifications: Notifications): Set<string> {
  let held = heldByRuntime.get(notifications);
  if (held === undefined) {
    held = new Set();
    heldByRuntime.set(notifications, held);
  }
  return held;
}

export interface PullDeliveryOptions {
  /** The conversation's Baton session. */
  sessionId: string;
}

/**
 * A pull bridge's delivery: the loop asks what to give the model at each step, and says when the
 * model has it.
 */
export interface PullDelivery {
  /**
   * The results to give the model at this step, by their scheduling (`isDueAt`: `interrupt` and
   * `silent` ones at any step, `when_idle` ones when `idle`), oldest first. Each is held for this
   * loop until `confirm` or `release`: no other loop of the process takes it meanwhile, and it
   * stays in the store, so a process that dies before the model saw it gives it again after.
   */
  take(step: { idle: boolean }): Promise<Notification[]>;
  /** The results held, in the order they were taken. */
  readonly held: readonly Notification[];
  /**
   * The framework has the held results in its conversation (the step that was given them ran, or
   * its history was saved): each is acknowledged, and never given again. With `given`, only
   * those of them (by id) that are held.
   */
  confirm(given?: readonly Pick<Notification, 'id'>[]): Promise<void>;
  /** The step that was given them failed before the model saw them: the next `take` gives them again. */
  release(): void;
}

export function pullDelivery(
  runtime: Pick<Runtime, 'notifications'>,
  { sessionId }: PullDeliveryOptions,
): PullDelivery {
  const notifications = runtime.notifications;
  const inProcess = heldIn(notifications);
  let held: Notification[] = [];
  const letGo = (given: readonly Notification[]) => {
    for (const notification of given) inProcess.delete(notification.id);
  };
  return {
    get held() {
      return held;
    },
    async take({ idle }) {
      const taken: Notification[] = [];
      for (const notification of await notifications.list({ sessionId, status: 'queued' })) {
        if (!isDueAt(notification, { idle }) || inProcess.has(notification.id)) continue;
        inProcess.add(notification.id);
        taken.push(notification);
      }
      held = [...held, ...taken];
      return taken;
    },
    async confirm(given) {
      const ids = given === undefined ? undefined : new Set(given.map((notification) => notification.id));
      const confirmed = ids === undefined ? held : held.filter((notification) => ids.has(notification.id));
      held = ids === undefined ? [] : held.filter((notification) => !ids.has(notification.id));
      try {
        await Promise.all(confirmed.map((notification) => notifications.ack(notification.id)));
      } finally {
        letGo(confirmed);
      }
    },
    release() {
      letGo(held);
      held = [];
    },
  };
}
