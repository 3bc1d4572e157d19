import type { BatonError, Scheduling } from '@baton/contracts';

/**
 * What a call that talks back keeps (its messages read, its updates and reminders, its stall
 * watch), made on its first use: most calls never steer, update, remind or stall, and a call
 * parked for hours holds as little as it can.
 */
export interface TalkState {
  /** Steering: the read of messages under way (`ctx.nextMessage`); the next waits for it. */
  messageReads?: Promise<unknown>;
  /** When the running attempt last gave a sign of life, for a tool with `heartbeatTimeoutMs`. */
  lastSignAt: number;
  /** An attempt stopped as stalled and tried again: what it returns later is dropped. */
  stalledAttempt?: number;
  /** Why it was stopped: what its signal says, read late. */
  stalledReason?: BatonError;
  /** Set when the call ends `timed_out` because its run stalled: the quiet time that stopped it. */
  stalledMs?: number;
  /** The update that waits for the update timer, the latest of those merged. */
  mergedUpdate?: { value: unknown; scheduling: Scheduling };
  /** The notification of the call's latest update, which a newer update or the end replaces. */
  updateNotificationId?: string;
  /** The notification of its latest reminder (`notifyAfterMs`), which a newer one, an update or the end replaces. */
  reminderNotificationId?: string;
  /** Its notifications on their way to the store: one replaced meanwhile is acknowledged once there. */
  notificationsUnwritten?: Map<string, Promise<void>>;
  /** The timers of a call that talks back, one of each kind (see timers.ts). */
  stallTimer?: unknown;
  updateTimer?: unknown;
  reminderTimer?: unknown;
}
