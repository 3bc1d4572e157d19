import { memoryStore, type Store, type StoreWrite } from '@baton/store';
import type { SimulatedClock } from '../src/testing.js';
import { settle } from './helpers.js';

export const AWAY = 'connect ECONNREFUSED 127.0.0.1:5432';

/**
 * A store that can go away: while `away`, every request fails as a database that cannot be
 * reached does, and says so through `isUnavailable`.
 */
export function storeThatGoesAway(kept: Store = memoryStore()) {
  const state = {
    away: false,
    requests: 0,
    /** Each write asked for, as it was asked (JSON), in order. */
    writes: [] as string[],
    /** Writes this says yes to are stored, and then fail as if the answer was lost on the way. */
    loseAnswer: (_write: StoreWrite): boolean => false,
  };
  const store = Object.create(kept) as Store;
  const away = () => Object.assign(new Error(AWAY), { code: 'ECONNREFUSED' });
  for (const name of [
    'write',
    'getCall',
    'listCalls',
    'heartbeat',
    'registerInstance',
    'listInstances',
    'claimCalls',
  ] as const) {
    const method = kept[name] as (...args: unknown[]) => Promise<unknown>;
    Object.defineProperty(store, name, {
      value: async (...args: unknown[]) => {
        state.requests++;
        if (name === 'write') state.writes.push(JSON.stringify(args[0]));
        if (state.away) throw away();
        const result = await method.apply(kept, args);
        if (name === 'write' && state.loseAnswer(args[0] as StoreWrite)) throw away();
        return result;
      },
    });
  }
  Object.defineProperty(store, 'isUnavailable', {
    value: (error: unknown) => (error as { code?: string }).code === 'ECONNREFUSED',
  });
  return { store, state };
}

/** Moves the simulated clock on in small steps, letting the runtime's promises run between them. */
export async function pass(clock: SimulatedClock, ms: number): Promise<void> {
  for (let elapsed = 0; elapsed < ms; elapsed += 50) {
    clock.increment(50);
    await settle();
  }
}
