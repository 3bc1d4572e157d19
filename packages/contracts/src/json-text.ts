import { DEFAULT_MAX_BODY_DEPTH, DEFAULT_MAX_BODY_KEYS } from './limits.js';

/** How much shape a JSON text may have: how deep it nests, how many keys and nested values it holds. */
export interface JsonTextLimits {
  /** Objects and arrays nested deeper than this are refused. */
  maxDepth?: number;
  /** More object keys and nested values (objects and arrays) than this, in all, are refused. */
  maxKeys?: number;
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_OBJECT = 0x7b;
const OPEN_ARRAY = 0x5b;
const CLOSE_OBJECT = 0x7d;
const CLOSE_ARRAY = 0x5d;
const COLON = 0x3a;

/**
 * Why a JSON text goes past the limits, read in one pass without parsing it; undefined when it
 * does not (or is not JSON: the parser says so). A parser makes an object for every nested value
 * and a property for every key: a 1 MiB body nested 500,000 deep, or of 70,000 keys, cost tens of
 * megabytes and a third of a second to parse, only to be refused afterwards. This costs a read
 * of the text, strings skipped a quote at a time.
 */
export function jsonTextRefusal(text: string, limits: JsonTextLimits = {}): string | undefined {
  const maxDepth = limits.maxDepth ?? DEFAULT_MAX_BODY_DEPTH;
  const maxKeys = limits.maxKeys ?? DEFAULT_MAX_BODY_KEYS;
  let depth = 0;
  let keys = 0;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code === QUOTE) {
      i = stringEnd(text, i);
      if (i < 0) return undefined;
    } else if (code === OPEN_OBJECT || code === OPEN_ARRAY) {
      if (++depth > maxDepth) return `it nests deeper than ${maxDepth} levels`;
      // The outermost value is the body itself, not a nested one.
      if (depth > 1 && ++keys > maxKeys) return `it holds more than ${maxKeys} keys and nested values`;
    } else if (code === CLOSE_OBJECT || code === CLOSE_ARRAY) {
      depth--;
    } else if (code === COLON && ++keys > maxKeys) {
      return `it holds more than ${maxKeys} keys and nested values`;
    }
  }
  return undefined;
}

/** The index of the quote that ends the string opened at `start`, or -1 when none does. */
function stringEnd(text: string, start: number): number {
  let at = start;
  for (;;) {
    at = text.indexOf('"', at + 1);
    if (at < 0) return -1;
    let backslashes = 0;
    while (text.charCodeAt(at - 1 - backslashes) === BACKSLASH) backslashes++;
    if (backslashes % 2 === 0) return at;
  }
}
