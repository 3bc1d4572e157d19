import { type CallEvent, isTerminalStatus } from '@baton/contracts';
import type { StoreNotifications } from '@baton/store';
import { merge, type Observable } from 'rxjs';
import type { Clock } from '../clock.js';
import { GIVEN_END_WAIT_MS } from '../defaults.js';
import type { Following } from '../following.js';
import type { Failures } from '../log.js';
import type { Runtime } from '../runtime-api.js';
import { acknowledgeGivenEnd, endStored } from './given.js';
import { holdDue, takeNotifications } from './holding.js';
import { watchNotifications } from './watching.js';

export interface LedgerDeps {
  store: StoreNotifications;
  /** Who holds what this runtime holds: its instance, whose holds lapse with its lease. */
  instanceId: string;
  clock: Pick<Clock, 'now' | 'setTimeout' | 'clearTimeout'>;
  /** The runtime's reads of a call, for the rule of an end given by asking. */
  runtime: Pick<Runtime, 'get' | 'follow'>;
  events$: Observable<CallEvent>;
  following: Pick<Following, 'storedElsewhere' | 'ticks'>;
  failures: Pick<Failures, 'on'>;
}

/**
 * The ledger: the one place where a call's end, update or reminder is given to a consumer and
 * acknowledged (`runtime.notifications`). Every consumer (the bridge kit's pull and push, the host
 * packages, a wait, the MCP tasks, the A2A follower, the REST API) takes what it gives through
 * these operations, under one rule, written in docs/BEHAVIOURS.md: a notification counts as given
 * once it is acknowledged, and one held by a process that died is due again.
 */
export function createLedger({
  store,
  instanceId,
  clock,
  runtime,
  events$,
  following,
  failures,
}: LedgerDeps): Runtime['notifications'] {
  const notifications: Runtime['notifications'] = {
    list: (filter) => store.listNotifications(filter),
    count: (filter) => store.countNotifications(filter),
    ack: (id) => store.acknowledgeNotification(id, clock.now()),
    hold: (request) => holdDue(store, instanceId, () => clock.now(), request),
    release: (notificationIds) => store.releaseNotifications(notificationIds, instanceId),
    given: async (callId) => {
      const record = await runtime.get(callId);
      if (!record || !isTerminalStatus(record.status)) return 0;
      // Its end may be here before its notification is stored (the same write, still on its
      // way): that is waited for, a while at most (a write refused would never come).
      const stop = new AbortController();
      const timer = clock.setTimeout(() => stop.abort(), GIVEN_END_WAIT_MS);
      await endStored(runtime, record, stop.signal);
      clock.clearTimeout(timer);
      return acknowledgeGivenEnd(notifications, record);
    },
    take: (request) => takeNotifications(notifications, request),
    watch: (target) =>
      watchNotifications(
        {
          store,
          events$,
          storedElsewhere: (about) =>
            merge(
              following.storedElsewhere((notice) => about(notice.sessionIds)),
              following.ticks(),
            ),
          failed: failures.on('watch notifications'),
        },
        target,
      ),
  };
  return notifications;
}
