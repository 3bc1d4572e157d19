import { describe, expect, it } from 'vitest';
import { DEFAULT_MAX_BODY_DEPTH, DEFAULT_MAX_BODY_KEYS, jsonTextRefusal } from '../src/index.js';

describe('jsonTextRefusal: the shape of a JSON text, read before it is parsed', () => {
  it('takes what an honest request looks like', () => {
    const body = JSON.stringify({ name: 'search', args: { query: 'a "quoted" {not nested} [text]: \\ ' } });
    expect(jsonTextRefusal(body)).toBeUndefined();
    expect(jsonTextRefusal('{}')).toBeUndefined();
    expect(jsonTextRefusal('"a string"')).toBeUndefined();
  });

  it('refuses a text nested deeper than its limit, and takes one at it', () => {
    const nested = (levels: number) => `${'['.repeat(levels)}${']'.repeat(levels)}`;
    expect(jsonTextRefusal(nested(DEFAULT_MAX_BODY_DEPTH))).toBeUndefined();
    expect(jsonTextRefusal(nested(DEFAULT_MAX_BODY_DEPTH + 1))).toBe(
      `it nests deeper than ${DEFAULT_MAX_BODY_DEPTH} levels`,
    );
    expect(jsonTextRefusal(nested(500_000))).toMatch(/nests deeper/);
    expect(jsonTextRefusal(nested(5), { maxDepth: 4 })).toMatch(/deeper than 4/);
  });

  it('refuses a text of more keys and nested values than its limit', () => {
    const keys = (count: number) =>
      JSON.stringify(Object.fromEntries(Array.from({ length: count }, (_, i) => [`k${i}`, i])));
    expect(jsonTextRefusal(keys(DEFAULT_MAX_BODY_KEYS))).toBeUndefined();
    expect(jsonTextRefusal(keys(DEFAULT_MAX_BODY_KEYS + 1))).toBe(
      `it holds more than ${DEFAULT_MAX_BODY_KEYS} keys and nested values`,
    );
    // Nested values count too: many small objects in an array.
    expect(jsonTextRefusal(`[${Array(20).fill('{}').join(',')}]`, { maxKeys: 19 })).toMatch(/more than 19/);
  });

  it('does not count what is inside strings, escaped quotes and backslashes included', () => {
    const tricky = JSON.stringify({ text: `${'[{:'.repeat(50_000)} \\" \\\\" "` });
    expect(jsonTextRefusal(tricky, { maxDepth: 2, maxKeys: 1 })).toBeUndefined();
  });

  it('leaves a text that is not JSON to the parser', () => {
    expect(jsonTextRefusal('{"open": "never closed')).toBeUndefined();
  });
});
