import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import type { AnyTool, RuntimeInstance } from '@baton/contracts';

/**
 * This process's boot id: one for every runtime in the process, even from two copies of this
 * package (so kept on `globalThis`), and new in every process.
 */
const BOOT_KEY = Symbol.for('baton.boot');
const bootHolder = globalThis as { [BOOT_KEY]?: string };
bootHolder[BOOT_KEY] ??= randomUUID();
const processBoot: string = bootHolder[BOOT_KEY];

/** Signal 0 checks that a process exists without touching it; EPERM means it exists as someone else's. */
function processExists(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Whether an instance's process is gone for sure, seen from this host: one with this process's
 * PID but another boot id was a process before this one (a restarted container's PID 1); one with
 * another PID is gone when no process has that PID. Elsewhere only its lease can tell.
 */
function processGone(instance: RuntimeInstance, host: string): boolean {
  if (instance.host !== host) return false;
  if (instance.pid === process.pid) return instance.boot !== processBoot;
  return !processExists(instance.pid);
}

/**
 * The instances whose calls are orphans: those whose heartbeat is older than their lease, and at
 * once those whose process is gone from this host.
 */
export function goneInstances(instances: readonly RuntimeInstance[], selfId: string, now: number): string[] {
  const host = hostname();
  return instances
    .filter(
      (instance) =>
        instance.id !== selfId &&
        (instance.heartbeatAt + instance.leaseMs < now || processGone(instance, host)),
    )
    .map((instance) => instance.id);
}

/**
 * The version of what this process says to the others on its store (`RuntimeInstance.protocol`),
 * one more at each change of it, which a release's notes name with what a process of the one
 * before is still told in its words while it is live (see Peers):
 * - 1: the first release's.
 */
export const PROCESS_PROTOCOL = 1;

export function thisInstance(id: string, now: number, leaseMs: number): RuntimeInstance {
  return {
    id,
    host: hostname(),
    pid: process.pid,
    boot: processBoot,
    startedAt: now,
    heartbeatAt: now,
    leaseMs,
    protocol: PROCESS_PROTOCOL,
  };
}

/** Stands in for a tool that is no longer registered, so that its orphaned call can still be ended. */
export function unregisteredTool(name: string): AnyTool {
  return {
    name,
    description: '',
    input: {},
    execution: {
      concurrency: 'parallel',
      idempotent: false,
      readOnly: false,
      scheduling: 'when_idle',
      mode: undefined,
      inlineBudgetMs: undefined,
      timeoutMs: undefined,
      maxConcurrency: undefined,
    },
    validateInput: (value) => ({ ok: true, value }),
    execute: () => undefined,
  };
}
