import { z } from 'zod';

/**
 * What one tenant may do: calls it may make in a minute (a burst of that many, refilled evenly), and
 * notifications it may leave unacknowledged (past them, it makes no call until it acknowledges).
 */
export const TenantQuota = z
  .strictObject({
    callsPerMinute: z.number().int().positive(),
    notificationsKept: z.number().int().positive(),
  })
  .partial();
export type TenantQuota = z.infer<typeof TenantQuota>;

/** `quotas` in the config file: every tenant's, and those of tenants named apart. */
export const QuotaOptions = TenantQuota.extend({
  tenants: z.record(z.string(), TenantQuota).optional(),
});
export type QuotaOptions = z.infer<typeof QuotaOptions>;

/** A call the tenant's quota does not let in now: nothing of it was kept. */
export interface QuotaRefusal {
  code: 'quota_exceeded';
  message: string;
  /** When one more call is let in. */
  retryAfterSeconds: number;
}

interface Bucket {
  calls: number;
  at: number;
}

/** Buckets kept at once; past it, those that have refilled (the same as new) are dropped. */
const MAX_BUCKETS = 10_000;
/** A tenant's count of notifications kept is read again after this long (one read per second at most). */
const COUNT_FOR_MS = 1_000;
/** When a tenant over its notifications is told to come back. */
const NOTIFICATIONS_RETRY_SECONDS = 5;

/** How many notifications of a tenant wait to be acknowledged, in the store (every process's). */
export type QueuedNotifications = (tenant: string | undefined) => Promise<number>;

/**
 * Each tenant's calls per minute, as a token bucket: a tenant may make `callsPerMinute` at once,
 * then one each `60 s / callsPerMinute`; and its notifications kept, counted in the store (read at
 * most once a second). Past either, a call is refused `quota_exceeded` (429, with `Retry-After`)
 * before anything of it is kept, while other tenants' calls go on as before. The buckets are this
 * process's: with several API servers, each lets a tenant in this far.
 */
export class TenantQuotas {
  readonly #options: QuotaOptions;
  readonly #now: () => number;
  readonly #buckets = new Map<string, Bucket>();
  readonly #refused: (tenant: string | undefined) => void;
  readonly #queued: QueuedNotifications;
  readonly #counted = new Map<string, { count: number; at: number }>();

  /** `refused`: told of each refusal (the metrics count them by tenant); `queued`: the store's count. */
  constructor(
    options: QuotaOptions,
    now: () => number = Date.now,
    refused: (tenant: string | undefined) => void = () => {},
    queued: QueuedNotifications = async () => 0,
  ) {
    this.#options = options;
    this.#now = now;
    this.#refused = refused;
    this.#queued = queued;
  }

  /** Whether any quota is set: without one, no call is counted. */
  get limits(): boolean {
    const { callsPerMinute, notificationsKept, tenants = {} } = this.#options;
    return callsPerMinute !== undefined || notificationsKept !== undefined || Object.keys(tenants).length > 0;
  }

  /**
   * Why the tenant may make no call now, without taking one (the runtime takes one per call it
   * starts): a door that can answer in its own protocol's words before the call (MCP's 429) asks this.
   */
  async refusal(tenant: string | undefined): Promise<QuotaRefusal | undefined> {
    const overKept = await this.#notificationsRefusal(tenant);
    if (overKept) return overKept;
    const key = tenant ?? '';
    const perMinute = this.#quota(key, 'callsPerMinute');
    const bucket = this.#buckets.get(key);
    if (perMinute === undefined || !bucket) return undefined;
    const perMs = perMinute / 60_000;
    const calls = Math.min(perMinute, bucket.calls + (this.#now() - bucket.at) * perMs);
    return calls < 1 ? this.#bucketRefusal(tenant, perMinute, calls, perMs) : undefined;
  }

  #bucketRefusal(tenant: string | undefined, perMinute: number, calls: number, perMs: number): QuotaRefusal {
    const retryAfterSeconds = Math.max(1, Math.ceil((1 - calls) / perMs / 1_000));
    return {
      code: 'quota_exceeded',
      message: `${tenant === undefined ? 'the server' : `the tenant ${tenant}`} may make ${perMinute} calls a minute, and has: try again in ${retryAfterSeconds} s`,
      retryAfterSeconds,
    };
  }

  #quota(tenant: string, field: keyof TenantQuota): number | undefined {
    const tenants = this.#options.tenants ?? {};
    const own = Object.hasOwn(tenants, tenant) ? tenants[tenant] : undefined;
    return own?.[field] ?? this.#options[field];
  }

  /** Takes one call of the tenant's quota, or says why it may not and when it may. */
  async take(tenant: string | undefined): Promise<QuotaRefusal | undefined> {
    const overKept = await this.#notificationsRefusal(tenant);
    if (overKept) {
      this.#refused(tenant);
      return overKept;
    }
    return this.#takeFromBucket(tenant);
  }

  async #notificationsRefusal(tenant: string | undefined): Promise<QuotaRefusal | undefined> {
    const key = tenant ?? '';
    const limit = this.#quota(key, 'notificationsKept');
    if (limit === undefined) return undefined;
    const now = this.#now();
    let counted = this.#counted.get(key);
    if (!counted || now - counted.at >= COUNT_FOR_MS) {
      counted = { count: await this.#queued(tenant), at: now };
      this.#counted.delete(key);
      this.#counted.set(key, counted);
      const oldest = this.#counted.keys().next().value;
      if (this.#counted.size > MAX_BUCKETS && oldest !== undefined) this.#counted.delete(oldest);
    }
    if (counted.count < limit) return undefined;
    return {
      code: 'quota_exceeded',
      message: `${tenant === undefined ? 'the server' : `the tenant ${tenant}`} keeps ${counted.count} notifications not yet acknowledged (at most ${limit}): acknowledge them before new calls`,
      retryAfterSeconds: NOTIFICATIONS_RETRY_SECONDS,
    };
  }

  #takeFromBucket(tenant: string | undefined): QuotaRefusal | undefined {
    const key = tenant ?? '';
    const perMinute = this.#quota(key, 'callsPerMinute');
    if (perMinute === undefined) return undefined;
    const now = this.#now();
    const perMs = perMinute / 60_000;
    const bucket = this.#buckets.get(key) ?? { calls: perMinute, at: now };
    bucket.calls = Math.min(perMinute, bucket.calls + (now - bucket.at) * perMs);
    bucket.at = now;
    if (bucket.calls < 1) {
      this.#buckets.set(key, bucket);
      this.#refused(tenant);
      return this.#bucketRefusal(tenant, perMinute, bucket.calls, perMs);
    }
    bucket.calls -= 1;
    this.#buckets.set(key, bucket);
    if (this.#buckets.size > MAX_BUCKETS) this.#dropRefilled(now);
    return undefined;
  }

  #dropRefilled(now: number): void {
    for (const [key, bucket] of this.#buckets) {
      const perMinute = this.#quota(key, 'callsPerMinute') ?? 0;
      if (bucket.calls + (now - bucket.at) * (perMinute / 60_000) >= perMinute) this.#buckets.delete(key);
    }
  }
}
