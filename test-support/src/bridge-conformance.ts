import type { BridgeConformanceOptions } from '@baton/runtime/bridge/testing';
import { sqliteStore } from '@baton/store-sqlite';

/** What every bridge's conformance run takes: the SQLite store of its restart. */
export const bridgeConformanceOptions: BridgeConformanceOptions = {
  sqliteStore: (path) => sqliteStore({ path }),
};
