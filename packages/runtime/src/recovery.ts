import { hostname } from 'node:os';
import type { AnyTool, RuntimeInstance } from '@baton/contracts';

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
 * The instances whose calls are orphans: those whose heartbeat is older than their lease, and at
 * once those whose process no longer exists on this host.
 */
export function goneInstances(instances: readonly RuntimeInstance[], selfId: string, now: number): string[] {
  const host = hostname();
  return instances
    .filter(
      (instance) =>
        instance.id !== selfId &&
        (instance.heartbeatAt + instance.leaseMs < now ||
          (instance.host === host && !processExists(instance.pid))),
    )
    .map((instance) => instance.id);
}

export function thisInstance(id: string, now: number, leaseMs: number): RuntimeInstance {
  return { id, host: hostname(), pid: process.pid, startedAt: now, heartbeatAt: now, leaseMs };
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
