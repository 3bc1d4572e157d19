import { describe, expect, it } from 'vitest';
import {
  DEFAULT_MAX_BODY_DEPTH,
  DEFAULT_MAX_BODY_KEYS,
  JsonShapeReader,
  jsonTextRefusal,
  readJsonBody,
} from '../src/index.js';

const utf8 = new TextEncoder();

/** A body arriving in parts of `size` bytes, counting the parts taken from it. */
function arriving(text: string, size: number) {
  const bytes = utf8.encode(text);
  const taken = { parts: 0, returned: false };
  async function* parts() {
    try {
      for (let at = 0; at < bytes.length; at += size) {
        taken.parts++;
        yield bytes.subarray(at, at + size);
      }
    } finally {
      taken.returned = true;
    }
  }
  return { body: parts(), taken, count: Math.ceil(bytes.length / size) };
}

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

  it('reads runs of backslashes before quotes the same, whole or in parts of any size', () => {
    // Each value ends in 0 to 5 backslashes before its closing quote, beside escaped quotes; short
    // ones are read byte by byte, long ones searched for their quotes, the runs cut at every offset
    // around the 64th byte (where the search takes over).
    const pads = [0, 1, ...Array.from({ length: 14 }, (_, k) => 56 + k)];
    const values = Array.from({ length: 6 }, (_, run) =>
      pads.map((pad) => `${'x'.repeat(pad)}${'\\'.repeat(run)}"[{:${'\\'.repeat(run)}`),
    ).flat();
    const text = JSON.stringify({ a: values, b: { c: [[1]] } });
    const whole = (limits: { maxDepth: number }) =>
      new JsonShapeReader({ ...limits, maxKeys: 99 }).read(text);
    expect(whole({ maxDepth: 3 })).toBe('it nests deeper than 3 levels');
    expect(whole({ maxDepth: 4 })).toBeUndefined();
    const bytes = utf8.encode(text);
    for (const size of [1, 2, 3, 7, 100, 129, 1000]) {
      for (const maxDepth of [3, 4]) {
        const reader = new JsonShapeReader({ maxDepth, maxKeys: 99 });
        let verdict: string | undefined;
        for (let at = 0; at < bytes.length; at += size) verdict = reader.read(bytes.subarray(at, at + size));
        expect(verdict, `parts of ${size}, depth ${maxDepth}`).toBe(whole({ maxDepth }));
      }
    }
  });

  it('reads a text cut anywhere, mid-string and mid-character, as it reads it whole', () => {
    const text = JSON.stringify({ a: [{ b: 'é "[{" ✓ \\' }], c: { d: [1, 2, [3]] } });
    const bytes = utf8.encode(text);
    for (let cut = 1; cut < bytes.length; cut++) {
      const reader = new JsonShapeReader({ maxDepth: 3, maxKeys: 9 });
      expect(reader.read(bytes.subarray(0, cut)) ?? reader.read(bytes.subarray(cut))).toBe(
        'it nests deeper than 3 levels',
      );
      const wide = new JsonShapeReader({ maxDepth: 4, maxKeys: 9 });
      expect(wide.read(bytes.subarray(0, cut)) ?? wide.read(bytes.subarray(cut))).toBeUndefined();
    }
  });
});

describe('readJsonBody: a body read as it arrives, refused at the part that shows it', () => {
  it('gives the bytes of a body within its limits', async () => {
    const text = JSON.stringify({ name: 'search', args: { query: 'naïve' } });
    const { body } = arriving(text, 5);
    const read = await readJsonBody(body, { maxBytes: 1024 });
    expect(read.kind).toBe('read');
    if (read.kind === 'read') expect(new TextDecoder().decode(read.bytes)).toBe(text);
  });

  it('refuses a deep body at its first parts, and reads the rest to its end, keeping none of it', async () => {
    const levels = 100_000;
    const { body, taken, count } = arriving(`${'['.repeat(levels)}${']'.repeat(levels)}`, 1024);
    await expect(readJsonBody(body, { maxBytes: 1024 * 1024 })).resolves.toEqual({
      kind: 'refused',
      refusal: `it nests deeper than ${DEFAULT_MAX_BODY_DEPTH} levels`,
    });
    // Read to its end: the connection it came on is left able to carry the answer.
    expect(taken.parts).toBe(count);
  });

  it('stops reading a body past its bytes', async () => {
    const { body, taken } = arriving(JSON.stringify({ text: 'x'.repeat(10_000) }), 1000);
    await expect(readJsonBody(body, { maxBytes: 4000 })).resolves.toEqual({ kind: 'too_large' });
    expect(taken.parts).toBe(5);
    expect(taken.returned).toBe(true);
  });
});
