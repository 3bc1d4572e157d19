import { MAX_ID_CHARS } from './limits.js';

// C0 controls and DEL: a NUL cannot be stored, a line break would split an SSE `id:` line.
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it looks for.
const CONTROL_CHARACTER = /[\u0000-\u001f\u007f]/;

/**
 * Why a value cannot be an id (a call, session or message id, a tool name asked for), or
 * undefined when it can. One rule for every id, checked where a request comes in, so that every
 * id that is accepted can be stored, put in a URL and found again. `maxChars` is for a host that
 * keeps ids under a prefix of its own (the server's tenants): its callers still get 128.
 */
export function idProblem(value: unknown, maxChars = MAX_ID_CHARS): string | undefined {
  if (typeof value !== 'string') return `must be a string, not ${value === null ? 'null' : typeof value}`;
  if (value.length === 0) return 'must not be empty';
  if (value.length > maxChars) {
    return `is ${value.length} characters long, more than the limit of ${maxChars}`;
  }
  if (!value.isWellFormed()) return 'is not well-formed UTF-16 (it has a lone surrogate)';
  if (CONTROL_CHARACTER.test(value)) return 'must not contain control characters';
  return undefined;
}
