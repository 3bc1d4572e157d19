import type { Notification, Scheduling } from './call.js';

/**
 * The result scheduling, decided once for every bridge: whether a background result is given at
 * a model step. `interrupt` at any step; `when_idle` only once the model has finished its turn
 * (`idle`); `silent` at any step too, into the model's context without a turn of its own (a bridge
 * never starts a turn, nor has the model speak, for it: see `startsTurn`).
 */
export function isDueAt(
  notification: Pick<Notification, 'scheduling'>,
  { idle }: { idle: boolean },
): boolean {
  return notification.scheduling !== 'when_idle' || idle;
}

/** Whether a result that comes while the model is idle is worth a turn of its own: all but `silent` ones. */
export function startsTurn(notification: { scheduling: Scheduling }): boolean {
  return notification.scheduling !== 'silent';
}
