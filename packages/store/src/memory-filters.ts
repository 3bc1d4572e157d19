import type { CallStatus } from '@baton/contracts';
import type { CallFilter } from './store.js';

/** Whether a call's status is among those a filter asks for (undefined: no filter). */
export function statusFilter(status: CallFilter['status']): ((status: CallStatus) => boolean) | undefined {
  if (status === undefined) return undefined;
  if (typeof status === 'string') return (candidate) => candidate === status;
  const allowed = new Set(status);
  return (candidate) => allowed.has(candidate);
}

/** Whether a session is the one a filter names, or under its prefix. */
export function inSession(
  sessionId: string,
  filter: { sessionId?: string; sessionPrefix?: string },
): boolean {
  return (
    (filter.sessionId === undefined || sessionId === filter.sessionId) &&
    (filter.sessionPrefix === undefined || sessionId.startsWith(filter.sessionPrefix))
  );
}
