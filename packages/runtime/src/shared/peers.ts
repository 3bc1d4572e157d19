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
 * What the other live processes on a shared store speak (`RuntimeInstance.protocol`): a peer of
 * another version is told of in one line (a newer one: roll this one forward), and each change of
 * what the peers speak. A release that changes the protocol serves the one before in its words
 * while such a peer is live; the first release has none before it.
 */
export class Peers {
  /** The last line said, so that it is said once for as long as it holds. */
  #said = '';

  constructor(private readonly deps: PeersDeps) {}

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
      parts.push(`${older.length} of an earlier Baton (protocol ${versions(older)}): roll them forward`);
    }
    if (newer.length > 0) {
      parts.push(`${newer.length} of a newer Baton (protocol ${versions(newer)}): roll this one forward`);
    }
    if (parts.length === 0) return '';
    return `baton: processes on the store speak another protocol than this one's ${PROCESS_PROTOCOL}, ${parts.join('; ')}`;
  }
}
