import { BatonError, isBatonError } from '@baton/contracts';
import type { Store } from './store.js';

/**
 * A store's failure as the one error Baton throws: a `BatonError` stays as it is (an invalid
 * cursor is `invalid_arguments`); anything else (the driver's error: a full disk, a connection the
 * server dropped) is `persistence_failed`, with the same message and the original as its `cause`.
 */
export function asStoreError(error: unknown): BatonError {
  if (isBatonError(error)) return error;
  const message = error instanceof Error ? error.message : String(error);
  return new BatonError('persistence_failed', message, { cause: error });
}

function isPromiseLike(value: unknown): value is PromiseLike<unknown> {
  return typeof (value as PromiseLike<unknown> | null)?.then === 'function';
}

function rethrow(error: unknown): never {
  throw asStoreError(error);
}

/**
 * The store, with every method throwing (or rejecting with) `BatonError`s only: each adapter's
 * factory returns its store through this. Other members (a SQLite store's `integrityCheck`) are
 * reached as they are.
 */
export function withStoreErrors<S extends Store>(store: S): S {
  const wrapped = Object.create(store) as S;
  for (
    let proto = Object.getPrototypeOf(store);
    proto && proto !== Object.prototype;
    proto = Object.getPrototypeOf(proto)
  ) {
    for (const name of Object.getOwnPropertyNames(proto)) {
      const method = (store as unknown as Record<string, unknown>)[name];
      if (name === 'constructor' || typeof method !== 'function' || Object.hasOwn(wrapped, name)) continue;
      Object.defineProperty(wrapped, name, {
        value: (...args: unknown[]) => {
          try {
            const result = (method as (...given: unknown[]) => unknown).apply(store, args);
            return isPromiseLike(result) ? Promise.resolve(result).catch(rethrow) : result;
          } catch (error) {
            rethrow(error);
          }
        },
        // Tests spy on a store's methods, and wrap them again.
        writable: true,
        configurable: true,
      });
    }
  }
  return wrapped;
}
