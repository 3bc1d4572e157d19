import type { CallIssue } from '@baton/contracts';

export type CheckedArguments =
  | { ok: true; args: Record<string, unknown> }
  | { ok: false; issues: CallIssue[]; tooLarge: boolean };

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** `__proto__` as a key is an attack or a mistake, never data: such keys are dropped before anyone sees the arguments. */
function withoutProtoKeys(json: string): Record<string, unknown> {
  return JSON.parse(json, (key, value) => (key === '__proto__' ? undefined : value));
}

/**
 * What every call's arguments must be before their schema is asked: a JSON object, no larger than
 * the limit. Omitted arguments are `{}` (models send nothing for tools without parameters).
 */
export function checkArguments(args: unknown, maxBytes: number): CheckedArguments {
  if (args === undefined) return { ok: true, args: {} };
  if (!isPlainObject(args)) {
    const kind = args === null ? 'null' : Array.isArray(args) ? 'an array' : `a ${typeof args}`;
    return {
      ok: false,
      issues: [{ path: '', message: `arguments must be a JSON object, not ${kind}` }],
      tooLarge: false,
    };
  }
  let json: string;
  try {
    json = JSON.stringify(args);
  } catch (cause) {
    const message = `arguments must be JSON: ${(cause as Error).message}`;
    return { ok: false, issues: [{ path: '', message }], tooLarge: false };
  }
  // UTF-8 takes at most 3 bytes per UTF-16 unit, so the exact count is needed only near the limit.
  const bytes = json.length * 3 > maxBytes ? Buffer.byteLength(json) : json.length;
  if (bytes > maxBytes) {
    const message = `arguments are ${bytes} bytes, more than the limit of ${maxBytes} bytes`;
    return { ok: false, issues: [{ path: '', message }], tooLarge: true };
  }
  return { ok: true, args: json.includes('"__proto__"') ? withoutProtoKeys(json) : args };
}
