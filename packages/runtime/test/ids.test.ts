import { UUID } from 'uuidv7';
import { describe, expect, it } from 'vitest';
import { newId } from '../src/ids.js';

describe('call ids', () => {
  it('are canonical UUIDv7 strings, each new and later than the one before', () => {
    const ids = Array.from({ length: 2_000 }, () => newId());
    for (const id of ids) {
      expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
      expect(UUID.parse(id).toString()).toBe(id);
    }
    expect(new Set(ids).size).toBe(ids.length);
    expect([...ids].sort()).toEqual(ids);
  });
});
