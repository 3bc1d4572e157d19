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
/** How many bytes of a string are read one by one before it is searched for its next quote. */
const SHORT_STRING = 64;

/**
 * The shape of a JSON text, read a part at a time without parsing it: a parser makes an object for
 * every nested value and a property for every key, so a 1 MiB body nested 500,000 deep, or of
 * 70,000 keys, cost tens of megabytes and a third of a second to parse, only to be refused
 * afterwards. The parts may be strings or UTF-8 bytes, cut anywhere: every character that shapes
 * JSON is ASCII, and no byte of a multi-byte UTF-8 sequence is.
 */
export class JsonShapeReader {
  readonly #maxDepth: number;
  readonly #maxKeys: number;
  #depth = 0;
  #keys = 0;
  #inString = false;
  #escaped = false;
  #refusal: string | undefined;

  constructor(limits: JsonTextLimits = {}) {
    this.#maxDepth = limits.maxDepth ?? DEFAULT_MAX_BODY_DEPTH;
    this.#maxKeys = limits.maxKeys ?? DEFAULT_MAX_BODY_KEYS;
  }

  /** Reads the next part; answers why the text is refused once it is (and from then on). */
  read(part: string | Uint8Array): string | undefined {
    if (this.#refusal !== undefined) return this.#refusal;
    const isText = typeof part === 'string';
    let i = 0;
    while (i < part.length) {
      if (this.#inString) {
        i = this.#afterString(part, i);
        continue;
      }
      const code = isText ? part.charCodeAt(i) : (part[i] as number);
      i++;
      if (code === QUOTE) {
        this.#inString = true;
      } else if (code === OPEN_OBJECT || code === OPEN_ARRAY) {
        if (++this.#depth > this.#maxDepth)
          return this.#refuse(`it nests deeper than ${this.#maxDepth} levels`);
        // The outermost value is the body itself, not a nested one.
        if (this.#depth > 1 && ++this.#keys > this.#maxKeys) return this.#refuse(this.#tooManyKeys());
      } else if (code === CLOSE_OBJECT || code === CLOSE_ARRAY) {
        this.#depth--;
      } else if (code === COLON && ++this.#keys > this.#maxKeys) {
        return this.#refuse(this.#tooManyKeys());
      }
    }
    return undefined;
  }

  /**
   * Where the string `part` continues at `from` ends: just past its closing quote, or the part's
   * end. A string says nothing of the shape: its first bytes are read one by one (most strings are
   * short), then it jumps to its next quote by a native search, rather than loop over every byte of
   * a long argument.
   */
  #afterString(part: string | Uint8Array, from: number): number {
    let at = from;
    while (this.#inString && at < part.length) {
      at = this.#stepped(part, at, Math.min(part.length, at + SHORT_STRING));
      if (this.#inString && at < part.length) at = this.#jumped(part, at);
    }
    return at;
  }

  /** Reads a string byte by byte from `from` up to `stop`: where it ended, or `stop`. */
  #stepped(part: string | Uint8Array, from: number, stop: number): number {
    const isText = typeof part === 'string';
    for (let i = from; i < stop; i++) {
      const code = isText ? part.charCodeAt(i) : (part[i] as number);
      if (this.#escaped) this.#escaped = false;
      else if (code === BACKSLASH) this.#escaped = true;
      else if (code === QUOTE) {
        this.#inString = false;
        return i + 1;
      }
    }
    return stop;
  }

  /**
   * Jumps through a string to its next quote, past it (the string's end, or an escaped quote), or
   * to the part's end. The quote is escaped when an odd run of backslashes comes before it, one
   * carried from before `from` included.
   */
  #jumped(part: string | Uint8Array, from: number): number {
    const isText = typeof part === 'string';
    const quote = isText ? part.indexOf('"', from) : part.indexOf(QUOTE, from);
    const end = quote === -1 ? part.length : quote;
    let run = 0;
    while (end - run > from && (isText ? part.charCodeAt(end - run - 1) : part[end - run - 1]) === BACKSLASH)
      run++;
    if (end - run === from && this.#escaped) run++;
    this.#escaped = run % 2 === 1;
    if (quote === -1) return part.length;
    if (!this.#escaped) this.#inString = false;
    this.#escaped = false;
    return quote + 1;
  }

  #tooManyKeys(): string {
    return `it holds more than ${this.#maxKeys} keys and nested values`;
  }

  #refuse(refusal: string): string {
    this.#refusal = refusal;
    return refusal;
  }
}

/**
 * Why a JSON text goes past the limits, read in one pass without parsing it; undefined when it
 * does not (or is not JSON: the parser says so).
 */
export function jsonTextRefusal(text: string, limits: JsonTextLimits = {}): string | undefined {
  return new JsonShapeReader(limits).read(text);
}

/** What reading a JSON body came to: its bytes, or why it is refused. */
export type JsonBodyRead =
  | { kind: 'read'; bytes: Uint8Array }
  | { kind: 'too_large' }
  | { kind: 'refused'; refusal: string };

/**
 * A JSON body read as it arrives, its shape checked part by part: a body past its limits is
 * refused at the part that shows it, and what follows is read and dropped (so the connection can
 * carry the answer and the next request), never kept. Past `maxBytes` it stops reading.
 */
export async function readJsonBody(
  body: AsyncIterable<Uint8Array>,
  limits: JsonTextLimits & { maxBytes: number },
): Promise<JsonBodyRead> {
  const shape = new JsonShapeReader(limits);
  const parts: Uint8Array[] = [];
  let size = 0;
  let refusal: string | undefined;
  const iterator = body[Symbol.asyncIterator]();
  for (let next = await iterator.next(); !next.done; next = await iterator.next()) {
    size += next.value.byteLength;
    if (size > limits.maxBytes) {
      await iterator.return?.();
      return { kind: 'too_large' };
    }
    if (refusal !== undefined) continue;
    refusal = shape.read(next.value);
    if (refusal === undefined) parts.push(next.value);
    else parts.length = 0;
  }
  if (refusal !== undefined) return { kind: 'refused', refusal };
  const bytes = new Uint8Array(size);
  let at = 0;
  for (const part of parts) {
    bytes.set(part, at);
    at += part.byteLength;
  }
  return { kind: 'read', bytes };
}
