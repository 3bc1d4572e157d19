import type { RuntimeInstance } from '@baton/contracts';
import type { StoreInstances } from '@baton/store';
import type { Clock } from '../clock.js';
import type { Failures, Logger } from '../log.js';
import { goneInstances, PROCESS_PROTOCOL } from '../recovery/instances.js';

export interface PeersDeps {
  store: Pick<StoreInstances, 'listInstances'>;
  instanceId: string;
  clock: Clock;
  logger: Logger;
  failures: Pick<Failures, 'report'>;
}

/**
 * What the other live processes on a shared store speak (`RuntimeInstance.protocol`). A peer of an
 * older version is served in its words while it is live: a client stores the `queued` event of
 * every call it stores, as version 1 expects of a client; a running call's updates stay off the
 * notifications, which version 2 would take for its end. A peer of a newer version is told
 * of: roll this one forward. Each change of what the peers speak is said in one line.
 */
export class Peers {
  /** The oldest protocol a live peer speaks; until the first look, the oldest there is (safe with any). */
  #lowest = 0;
  /** The last line said, so that it is said once for as long as it holds. */
  #said = '';

  constructor(private readonly deps: PeersDeps) {}

  /** Whether every live peer speaks `protocol` or a later one: what this process may say to them. */
  speak(protocol: number): boolean {
    return this.#lowest >= protocol;
  }

  /** Reads the instances and takes what they speak; a read that fails leaves it as it was. */
  async look(): Promise<void> {
    try {
      this.seen(await this.deps.store.listInstances());
    } catch (error) {
      this.deps.failures.report('list the processes on the store', error);
    }
  }

  /** Takes what the live instances among `instances` speak (recovery lists them anyway). */
  seen(instances: readonly RuntimeInstance[]): void {
    const { instanceId, clock, logger } = this.deps;
    const gone = new Set(goneInstances(instances, instanceId, clock.now()));
    const live = instances.filter((instance) => instance.id !== instanceId && !gone.has(instance.id));
    const older = live.filter((instance) => instance.protocol < PROCESS_PROTOCOL);
    const newer = live.filter((instance) => instance.protocol > PROCESS_PROTOCOL);
    this.#lowest = Math.min(PROCESS_PROTOCOL, ...live.map((instance) => instance.protocol));
    const line = this.#line(older, newer);
    if (line === this.#said) return;
    const wasOther = this.#said !== '';
    this.#said = line;
    const protocols = (peers: readonly RuntimeInstance[]) =>
      peers.map(({ id, protocol }) => ({ id, protocol }));
    if (line !== '')
      logger.warn({ protocol: PROCESS_PROTOCOL, older: protocols(older), newer: protocols(newer) }, line);
    else if (wasOther)
      logger.info(
        { protocol: PROCESS_PROTOCOL },
        `baton: every process on the store speaks protocol ${PROCESS_PROTOCOL} now`,
      );
  }

  #line(older: readonly RuntimeInstance[], newer: readonly RuntimeInstance[]): string {
    const versions = (peers: readonly RuntimeInstance[]) =>
      [...new Set(peers.map((peer) => peer.protocol))].sort((a, b) => a - b).join(', ');
    const parts: string[] = [];
    if (older.length > 0) {
      parts.push(
        `${older.length} of an earlier Baton (protocol ${versions(older)}): served in their words until they are gone`,
      );
    }
    if (newer.length > 0) {
      parts.push(`${newer.length} of a newer Baton (protocol ${versions(newer)}): roll this one forward`);
    }
    if (parts.length === 0) return '';
    return `baton: processes on the store speak another protocol than this one's ${PROCESS_PROTOCOL}, ${parts.join('; ')}`;
  }
}
