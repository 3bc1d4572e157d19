import { type Schedule, ToolError } from '@baton/contracts';
import type { Store } from '@baton/store';
import { Cron } from 'croner';
import { type Clock, unref } from '../clock.js';
import { LONGEST_TIMER_MS } from '../defaults.js';
import { newId } from '../ids.js';
import { SCHEDULE_MESSAGES, schedulesPerSessionMessage } from '../messages.js';

const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/i;

/** When a schedule fires, as the background runs' `schedule` parameter gives it. */
export type ScheduleTiming = Pick<Schedule, 'cronExpression' | 'scheduledAt' | 'timezone'>;

function text(value: unknown): string | undefined {
  return typeof value === 'string' && value.trim() !== '' ? value.trim() : undefined;
}

/** The background runs' `schedule` parameter, checked with its words (and ours for what it leaves unchecked). */
export function parseScheduleTiming(raw: unknown): ScheduleTiming {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw))
    throw new ToolError(SCHEDULE_MESSAGES.notObject);
  const fields = raw as Record<string, unknown>;
  const cronExpression = text(fields.cron_expression);
  const at = text(fields.scheduled_at);
  if (at !== undefined && !RFC3339.test(at)) throw new ToolError(SCHEDULE_MESSAGES.notRfc3339);
  if (cronExpression === undefined && at === undefined) {
    throw new ToolError(SCHEDULE_MESSAGES.neither);
  }
  if (cronExpression !== undefined && at !== undefined) {
    throw new ToolError(SCHEDULE_MESSAGES.both);
  }
  const timezone = text(fields.timezone) ?? 'UTC';
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: timezone });
  } catch {
    throw new ToolError(SCHEDULE_MESSAGES.badTimezone(timezone));
  }
  if (cronExpression !== undefined) {
    if (cronExpression.split(/\s+/).length !== 5) {
      throw new ToolError(SCHEDULE_MESSAGES.cronFields);
    }
    try {
      new Cron(cronExpression, { timezone, paused: true });
    } catch (cause) {
      throw new ToolError(SCHEDULE_MESSAGES.badCron((cause as Error).message));
    }
    return { cronExpression, timezone };
  }
  return { scheduledAt: Date.parse(at as string), timezone };
}

/** The first firing strictly after `after`; undefined when a one-shot has nothing left. */
export function nextFiring(timing: ScheduleTiming, after: number): number | undefined {
  if (timing.cronExpression === undefined) {
    return timing.scheduledAt !== undefined && timing.scheduledAt > after ? timing.scheduledAt : undefined;
  }
  const next = new Cron(timing.cronExpression, { timezone: timing.timezone, paused: true }).nextRun(
    new Date(after),
  );
  return next?.getTime();
}

/** The background runs' reply to a scheduled `spawn_background`. */
export function scheduledReply(schedule: Schedule) {
  const iso = (time: number | undefined) => (time === undefined ? null : new Date(time).toISOString());
  return {
    created: true,
    status: 'scheduled',
    title: schedule.title,
    tool: schedule.toolName,
    signal_on_completion: schedule.signalOnCompletion,
    schedule_id: schedule.id,
    schedule_type: schedule.cronExpression === undefined ? 'once' : 'cron',
    cron_expression: schedule.cronExpression ?? null,
    scheduled_at: iso(schedule.scheduledAt),
    timezone: schedule.timezone,
    next_trigger_at: iso(schedule.nextAt),
    enabled: schedule.enabled,
  };
}

export interface ScheduleRunnerOptions {
  clock: Clock;
  store: Store;
  /** Writes a schedule through the runtime's group commit. */
  save(schedule: Schedule): Promise<void>;
  /** Starts the background run of one firing. */
  fire(schedule: Schedule): Promise<unknown>;
  perSession: number;
  /** Where a firing that failed (the store is away) is reported; the schedule stays armed. */
  failed(op: string, error: unknown): void;
}

/**
 * Keeps schedules in the store and fires them on the runtime's clock. Every runtime on a store arms
 * the enabled schedules; a firing is claimed in the store first, so exactly one of them runs it.
 */
export class ScheduleRunner {
  readonly #options: ScheduleRunnerOptions;
  readonly #timers = new Map<string, unknown>();
  #closed = false;

  constructor(options: ScheduleRunnerOptions) {
    this.#options = options;
  }

  /** Arms every enabled schedule of the store: they survive a restart. */
  async open(): Promise<void> {
    for (const schedule of await this.#options.store.listSchedules({ enabled: true })) this.#arm(schedule);
  }

  async create(
    fields: Omit<Schedule, 'id' | 'nextAt' | 'enabled' | 'firings' | 'createdAt'>,
  ): Promise<Schedule> {
    const active = await this.#options.store.listSchedules({ sessionId: fields.sessionId, enabled: true });
    if (active.length >= this.#options.perSession) {
      throw new ToolError(schedulesPerSessionMessage(this.#options.perSession));
    }
    const now = this.#options.clock.now();
    // A one-shot whose time has passed fires at once.
    const nextAt =
      fields.cronExpression === undefined
        ? Math.max(fields.scheduledAt ?? now, now)
        : nextFiring(fields, now);
    const schedule: Schedule = {
      ...fields,
      id: `sch_${newId().replaceAll('-', '')}`,
      enabled: true,
      firings: 0,
      createdAt: now,
    };
    if (nextAt !== undefined) schedule.nextAt = nextAt;
    await this.#options.save(schedule);
    this.#arm(schedule);
    return schedule;
  }

  list(sessionId: string): Promise<Schedule[]> {
    return this.#options.store.listSchedules({ sessionId });
  }

  async cancel(scheduleId: string): Promise<boolean> {
    const schedule = (await this.#options.store.listSchedules({ enabled: true })).find(
      (s) => s.id === scheduleId,
    );
    if (!schedule) return false;
    this.#disarm(scheduleId);
    const cancelled: Schedule = { ...schedule, enabled: false };
    delete cancelled.nextAt;
    await this.#options.save(cancelled);
    return true;
  }

  close(): void {
    this.#closed = true;
    for (const id of [...this.#timers.keys()]) this.#disarm(id);
  }

  #arm(schedule: Schedule): void {
    const { nextAt } = schedule;
    if (this.#closed || nextAt === undefined) return;
    this.#disarm(schedule.id);
    const delay = Math.min(Math.max(nextAt - this.#options.clock.now(), 0), LONGEST_TIMER_MS);
    const handle = this.#options.clock.setTimeout(() => {
      this.#timers.delete(schedule.id);
      this.#due(schedule, nextAt).catch((error: unknown) => this.#options.failed('fire a schedule', error));
    }, delay);
    unref(handle);
    this.#timers.set(schedule.id, handle);
  }

  async #due(schedule: Schedule, dueAt: number): Promise<void> {
    if (this.#closed) return;
    const now = this.#options.clock.now();
    if (now < dueAt) {
      this.#arm(schedule);
      return;
    }
    const nextAt =
      schedule.cronExpression === undefined ? undefined : nextFiring(schedule, Math.max(now, dueAt));
    const next = nextAt === undefined ? { enabled: false } : { nextAt, enabled: true };
    if (!(await this.#options.store.claimFiring(schedule.id, dueAt, next))) {
      // Another runtime fired it: follow the schedule as the store has it now, in case that one dies.
      const current = (await this.#options.store.listSchedules({ enabled: true })).find(
        (s) => s.id === schedule.id,
      );
      if (current) this.#arm(current);
      return;
    }
    const fired: Schedule = { ...schedule, ...next, firings: schedule.firings + 1 };
    if (nextAt === undefined) delete fired.nextAt;
    this.#arm(fired);
    await this.#options.fire(fired);
  }

  #disarm(scheduleId: string): void {
    const handle = this.#timers.get(scheduleId);
    if (handle === undefined) return;
    this.#options.clock.clearTimeout(handle);
    this.#timers.delete(scheduleId);
  }
}
