import { z } from 'zod';

/** What one tenant may do: calls it may make in a minute (a burst of that many, refilled evenly). */
export const TenantQuota = z.strictObject({ callsPerMinute: z.number().int().positive() }).partial();

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

/**
 * Each tenant's calls per minute, as a token bucket: a tenant may make `callsPerMinute` at once,
 * then one each `60 s / callsPerMinute`; past it a call is refused `quota_exceeded` (429, with
 * `Retry-After`) before anything of it is kept, while other tenants' calls go on as before. The
 * buckets are this process's: with several API servers, each lets a tenant in this far.
 */
export class TenantQuotas {
  readonly #options: QuotaOptions;
  readonly #now: () => number;
  readonly #buckets = new Map<string, Bucket>();
  readonly #refused: (tenant: string | undefined) => void;

  /** `refused`: told of each refusal (the metrics count them by tenant). */
  constructor(
    options: QuotaOptions,
    now: () => number = Date.now,
    refused: (tenant: string | undefined) => void = () => {},
  ) {
    this.#options = options;
    this.#now = now;
    this.#refused = refused;
  }

  /** Whether any tenant has a quota. */
  get any(): boolean {
    const { callsPerMinute, tenants = {} } = this.#options;
    return callsPerMinute !== undefined || Object.values(tenants).some((quota) => quota.callsPerMinute);
  }

  #perMinute(tenant: string): number | undefined {
    const own = Object.hasOwn(this.#options.tenants ?? {}, tenant)
      ? this.#options.tenants?.[tenant]
      : undefined;
    return own?.callsPerMinute ?? this.#options.callsPerMinute;
  }

  /** Takes one call of the tenant's quota, or says why it may not and when it may. */
  take(tenant: string | undefined): QuotaRefusal | undefined {
    const key = tenant ?? '';
    const perMinute = this.#perMinute(key);
    if (perMinute === undefined) return undefined;
    const now = this.#now();
    const perMs = perMinute / 60_000;
    const bucket = this.#buckets.get(key) ?? { calls: perMinute, at: now };
    bucket.calls = Math.min(perMinute, bucket.calls + (now - bucket.at) * perMs);
    bucket.at = now;
    if (bucket.calls < 1) {
      this.#buckets.set(key, bucket);
      this.#refused(tenant);
      const retryAfterSeconds = Math.max(1, Math.ceil((1 - bucket.calls) / perMs / 1_000));
      return {
        code: 'quota_exceeded',
        message: `${tenant === undefined ? 'the server' : `the tenant ${tenant}`} may make ${perMinute} calls a minute, and has: try again in ${retryAfterSeconds} s`,
        retryAfterSeconds,
      };
    }
    bucket.calls -= 1;
    this.#buckets.set(key, bucket);
    if (this.#buckets.size > MAX_BUCKETS) this.#dropRefilled(now);
    return undefined;
  }

  #dropRefilled(now: number): void {
    for (const [key, bucket] of this.#buckets) {
      const perMinute = this.#perMinute(key) ?? 0;
      if (bucket.calls + (now - bucket.at) * (perMinute / 60_000) >= perMinute) this.#buckets.delete(key);
    }
  }
}
