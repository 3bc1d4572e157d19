import type { Runtime } from '@baton/runtime';
import { bearerOf, type Tenancy } from './tenancy.js';

/** How long /healthz waits for the store before it says the store is failing. */
export const HEALTH_STORE_TIMEOUT_MS = 2_000;

function withTimeout<T>(promise: Promise<T>, ms: number, message: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(message)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

export type Health =
  | { ok: true; body: { ok: true; instanceId?: string; stats?: ReturnType<Runtime['stats']> } }
  | { ok: false; error: unknown; message: string };

/**
 * Up means the store takes a write and a read; a store that fails (or hangs) is down. Anyone may
 * ask (a load balancer's probe): the instance and its counters, which count every tenant's calls,
 * are told only to whoever may read `/metrics` (`detailed`).
 */
export async function healthOf(
  runtime: Pick<Runtime, 'checkStore' | 'instanceId' | 'stats'>,
  detailed: boolean,
): Promise<Health> {
  try {
    await withTimeout(runtime.checkStore(), HEALTH_STORE_TIMEOUT_MS, 'the store did not answer in time');
  } catch (error) {
    return { ok: false, error, message: `the store failed: ${(error as Error).message ?? String(error)}` };
  }
  if (!detailed) return { ok: true, body: { ok: true } };
  return { ok: true, body: { ok: true, instanceId: runtime.instanceId, stats: runtime.stats() } };
}

export const METRICS_NEED_AN_OPERATOR =
  "/metrics counts every tenant's calls: it answers an operator token (operatorTokens, BATON_OPERATOR_TOKENS)";

/**
 * Who may read `/metrics`: anyone while no token is configured; once one is (a tenant's or an
 * operator's), an operator token only. The refusal, or undefined when the request may read.
 */
export function metricsRefusal(
  authorization: string | undefined,
  tenancy: Pick<Tenancy, 'authenticated' | 'scopeOf'>,
  operators: ReadonlySet<string>,
): { status: 401 | 403; code: 'unauthorized' | 'forbidden'; message: string } | undefined {
  if (!tenancy.authenticated && operators.size === 0) return undefined;
  const bearer = bearerOf(authorization);
  if (bearer !== undefined && operators.has(bearer)) return undefined;
  if (bearer !== undefined && tenancy.scopeOf(authorization)) {
    return { status: 403, code: 'forbidden', message: METRICS_NEED_AN_OPERATOR };
  }
  return { status: 401, code: 'unauthorized', message: METRICS_NEED_AN_OPERATOR };
}
