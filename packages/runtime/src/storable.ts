/**
 * What every store can keep. PostgreSQL refuses a NUL character and a lone surrogate in text and
 * JSON, while SQLite and memory keep them; so that a call behaves the same on every store, what a
 * caller sends with them is refused at intake, and what a tool produces with them is escaped: each
 * such character becomes U+FFFD, the replacement character (as `String.prototype.toWellFormed`
 * does for lone surrogates).
 */
import { UNSTORABLE_TEXT } from './messages.js';

/** Why a string cannot be stored as it is, or undefined when it can. */
export function unstorableText(text: string): string | undefined {
  if (text.includes('\0')) return UNSTORABLE_TEXT.nul;
  if (!text.isWellFormed()) return UNSTORABLE_TEXT.loneSurrogate;
  return undefined;
}

/** The text with every NUL and lone surrogate replaced by U+FFFD. */
export function storableText(text: string): string {
  return unstorableText(text) === undefined ? text : text.replaceAll('\0', '\uFFFD').toWellFormed();
}

// In JSON.stringify's output a NUL is always `\u0000` and a lone surrogate always `\udXXX` (a
// well-formed pair is written as it is). Pairs of backslashes are matched too, so that an escaped
// backslash followed by the letters `u0000` is not mistaken for one.
const UNSTORABLE_ESCAPES = /\\(?:\\|u0000|ud[89a-f][0-9a-f]{2})/g;

/**
 * A JSON value as every store keeps it: the value itself when it holds nothing to escape (the
 * usual case, found with one scan of its JSON), else a copy in which each NUL and lone surrogate,
 * in keys and in values, is U+FFFD. Throws what `JSON.stringify` throws (a cycle, a BigInt).
 */
export function storableValue<T>(value: T): T {
  if (typeof value === 'string') return storableText(value) as T;
  if (typeof value !== 'object' || value === null) return value;
  const json = JSON.stringify(value);
  if (json === undefined || !json.includes('\\u')) return value;
  const repaired = json.replace(UNSTORABLE_ESCAPES, (found) => (found === '\\\\' ? found : '\\ufffd'));
  return repaired === json ? value : (JSON.parse(repaired) as T);
}
