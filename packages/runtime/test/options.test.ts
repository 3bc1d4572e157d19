import { memoryStore } from '@baton/store';
import { describe, expect, it, vi } from 'vitest';
import { createRuntime } from '../src/index.js';

describe('runtime options', () => {
  it.each([
    [{ inlineBudgetMs: -1 }, 'inlineBudgetMs'],
    [{ timeoutMs: 0 }, 'timeoutMs'],
    [{ limits: { concurrency: Number.NaN } }, 'limits.concurrency'],
    [{ retention: { endedTtlMs: -5 } }, 'retention.endedTtlMs'],
  ])('refuses %j by name, before anything reaches the store', (options, field) => {
    const store = memoryStore();
    const registerInstance = vi.spyOn(store, 'registerInstance');
    expect(() => createRuntime({ store, ...options })).toThrow(
      `createRuntime: ${field} must be a positive number`,
    );
    expect(registerInstance).not.toHaveBeenCalled();
  });

  it.each(['client', 'worker'] as const)('refuses role %s on a store that processes do not share', (role) => {
    expect(() => createRuntime({ store: memoryStore(), role })).toThrow(
      `createRuntime: role '${role}' needs a store that processes share (such as PostgreSQL)`,
    );
  });
});
