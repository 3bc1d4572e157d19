import type { Notification } from '@baton/contracts';
import type { Runtime } from '../runtime-api.js';

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
   * runtime in one store operation until `confirm` or `release`: no other loop, of this process or
   * another, is given it meanwhile, and it stays in the store, so a process that dies before its
   * model saw it lets it go, and the next loop gives it again.
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
  /** The step that was given them failed before the model saw them: they are due again. */
  release(): Promise<void>;
}

export function pullDelivery(
  runtime: Pick<Runtime, 'notifications'>,
  { sessionId }: PullDeliveryOptions,
): PullDelivery {
  const { notifications } = runtime;
  let held: Notification[] = [];
  return {
    get held() {
      return held;
    },
    async take({ idle }) {
      const taken = await notifications.hold({ sessionId, idle });
      held = [...held, ...taken];
      return taken;
    },
    async confirm(given) {
      const ids = given === undefined ? undefined : new Set(given.map((notification) => notification.id));
      const confirmed = ids === undefined ? held : held.filter((notification) => ids.has(notification.id));
      held = ids === undefined ? [] : held.filter((notification) => !ids.has(notification.id));
      await Promise.all(confirmed.map((notification) => notifications.ack(notification.id)));
    },
    async release() {
      const given = held;
      held = [];
      if (given.length > 0) await notifications.release(given.map((notification) => notification.id));
    },
  };
}
