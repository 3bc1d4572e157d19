import { JsonShapeReader } from '@baton/contracts';
import type { BenchConfig } from '../config.js';
import type { Row } from '../measure.js';

const MEASURE = '12. a body read for its shape before it is parsed';

const utf8 = new TextEncoder();
const text = new TextDecoder();

/**
 * The bodies a server reads: a small call, and 1 MiB ones that are mostly one string argument
 * (a document, plain text; JSON quoted inside a string, dense with escaped quotes), each as the
 * bytes that arrive.
 */
function bodies(): Array<[string, Uint8Array]> {
  const call = (args: unknown) => utf8.encode(JSON.stringify({ name: 'read', args, sessionId: 's-1' }));
  const items = Array.from({ length: 20_000 }, (_, i) => ({ id: i, name: `item ${i}`, ok: true }));
  return [
    ['a small call', call({ query: 'the weather in Lyon', limit: 3 })],
    ['1 MiB of plain text', call({ text: 'lorem ipsum '.repeat(87_382) })],
    ['1 MiB of JSON in a string', call({ text: JSON.stringify(items) })],
  ];
}

/** Microseconds per read of `body`, the median of several timed batches. */
function microsecondsPer(body: Uint8Array, read: (body: Uint8Array) => unknown): number {
  const repeats = Math.max(1, Math.floor(2_000_000 / body.byteLength));
  const batches: number[] = [];
  for (let batch = 0; batch < 15; batch++) {
    const started = performance.now();
    for (let i = 0; i < repeats; i++) read(body);
    batches.push(((performance.now() - started) * 1_000) / repeats);
  }
  return batches.sort((a, b) => a - b)[7] as number;
}

/**
 * What checking a body's shape (its depth and keys, before any parse) costs each body, beside
 * what the parse it guards costs: the bytes decoded and `JSON.parse`d.
 */
export async function bodyShape(config: BenchConfig): Promise<Row[]> {
  const rows: Row[] = [];
  for (const [kind, body] of bodies()) {
    const shape: number[] = [];
    const parse: number[] = [];
    for (let round = 0; round < config.rounds; round++) {
      shape.push(microsecondsPer(body, (bytes) => new JsonShapeReader().read(bytes)));
      parse.push(microsecondsPer(body, (bytes) => JSON.parse(text.decode(bytes))));
      // Let the timers and the collector run between rounds.
      await new Promise((resolve) => setImmediate(resolve));
    }
    const parsed = `JSON.parse, ${kind}`;
    rows.push({ measure: MEASURE, subject: parsed, unit: 'µs', values: parse });
    rows.push({
      measure: MEASURE,
      subject: `its shape, ${kind}`,
      unit: 'µs',
      values: shape,
      comparedWith: parsed,
    });
  }
  return rows;
}
