import { setTimeout as sleep } from 'node:timers/promises';
import type { Runtime } from '@baton/runtime';
import type { Logger } from 'pino';
import type { ServerConfig } from './config.js';
import { redactedLocation } from './redacted-location.js';
import { openStore, type ProcessRole, runtimeFor, storeReady } from './served-runtime.js';
import type { ServedModule } from './tools-module.js';

/** How long a start waits for a store that cannot be reached yet, unless configured. */
export const DEFAULT_STORE_WAIT_MS = 60_000;
const FIRST_DELAY_MS = 250;
const MAX_DELAY_MS = 5_000;

/**
 * The runtime a process serves, once its store is ready. A store that cannot be reached yet (a
 * database that refuses connections while it starts, or after a failover) is waited for, up to
 * `storeWaitMs`, with one warn line per try: under a supervisor, a process started beside its
 * database waits for it instead of failing its start again and again. A store that refuses the
 * start for any other reason (a schema that is not Baton's, a database that does not exist) stops
 * the start at once, as does the last try.
 */
export async function readyRuntime(
  served: ServedModule,
  config: ServerConfig,
  options: { init: boolean; log: Logger; role: ProcessRole },
): Promise<Runtime> {
  const { log } = options;
  if ('runtime' in served) {
    const runtime = runtimeFor(served, config, options);
    await storeReady(runtime, config);
    return runtime;
  }
  const waitMs = config.storeWaitMs ?? DEFAULT_STORE_WAIT_MS;
  const until = Date.now() + waitMs;
  for (let attempt = 1; ; attempt++) {
    const store = openStore(config.storePath, options.init);
    const runtime = runtimeFor(served, config, { ...options, store });
    const started = await runtime.ready.then(
      () => undefined,
      (error: unknown) => error,
    );
    if (started === undefined) return runtime;
    const delayMs = Math.min(FIRST_DELAY_MS * 2 ** (attempt - 1), MAX_DELAY_MS, until - Date.now());
    if (!store.isUnavailable?.(started) || delayMs <= 0) {
      await runtime.close().catch((error: unknown) => log.warn({ err: error }, 'closing the runtime failed'));
      return storeReady(runtime, config).then(() => runtime);
    }
    await runtime.close().catch((error: unknown) => log.warn({ err: error }, 'closing the runtime failed'));
    log.warn(
      { attempt, retryInMs: delayMs },
      `the store ${redactedLocation(config.storePath)} cannot be reached yet (${(started as Error).message}): trying again in ${delayMs} ms, for up to ${waitMs} ms in all (BATON_STORE_WAIT_MS)`,
    );
    await sleep(delayMs);
  }
}
