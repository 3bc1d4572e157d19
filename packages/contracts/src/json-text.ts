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
    for (let i = 0; i < part.length; i++) {
      const code = isText ? part.charCodeAt(i) : (part[i] as number);
      if (this.#inString) {
        if (this.#escaped) this.#escaped = false;
        else if (code === BACKSLASH) this.#escaped = true;
        else if (code === QUOTE) this.#inString = false;
      } else if (code === QUOTE) {
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
