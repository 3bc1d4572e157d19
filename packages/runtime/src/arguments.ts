import { type CallIssue, idProblem } from '@baton/contracts';
import { ARGUMENT_MESSAGES, NOT_A_CALL_MESSAGE } from './messages.js';
import { unstorableText } from './storable.js';

export type CheckedArguments =
  | { ok: true; args: Record<string, unknown> }
  /** `storable`: whether the refused arguments can still be kept on the refusal's record. */
  | { ok: false; issues: CallIssue[]; storable: boolean };

/** The limits on a call's arguments as JSON. */
export interface ArgumentLimits {
  maxBytes: number;
  /** Objects and arrays nested deeper than this are refused. */
  maxDepth: number;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** `__proto__` as a key is an attack or a mistake, never data: such keys are dropped before anyone sees the arguments. */
function withoutProtoKeys(json: string): Record<string, unknown> {
  return JSON.parse(json, (key, value) => (key === '__proto__' ? undefined : value));
}

function joinPath(path: string, key: string | number): string {
  return path === '' ? String(key) : `${path}.${key}`;
}

/**
 * The first thing in the arguments that no store can keep: nesting past the limit, or a key or a
 * string with a NUL or a lone surrogate. The walk stops at the limit, so a value nested 10,000
 * deep costs no more than one nested `maxDepth` deep.
 */
function unstorableIssue(
  value: unknown,
  maxDepth: number,
  path: string,
  depth: number,
): CallIssue | undefined {
  if (typeof value === 'string') {
    const why = unstorableText(value);
    return why === undefined ? undefined : { path, message: ARGUMENT_MESSAGES.string(why) };
  }
  if (typeof value !== 'object' || value === null) return undefined;
  if (depth >= maxDepth) {
    return { path, message: ARGUMENT_MESSAGES.tooDeep(maxDepth) };
  }
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const issue = unstorableIssue(value[i], maxDepth, joinPath(path, i), depth + 1);
      if (issue) return issue;
    }
    return undefined;
  }
  for (const key in value) {
    if (!Object.hasOwn(value, key)) continue;
    const keyWhy = unstorableText(key);
    if (keyWhy !== undefined) return { path, message: ARGUMENT_MESSAGES.key(keyWhy) };
    const issue = unstorableIssue(
      (value as Record<string, unknown>)[key],
      maxDepth,
      joinPath(path, key),
      depth + 1,
    );
    if (issue) return issue;
  }
  return undefined;
}

/**
 * What every call's arguments must be before their schema is asked: a JSON object, no larger and
 * no deeper than the limits, whose text every store can keep. Omitted arguments are `{}` (models
 * send nothing for tools without parameters). A call refused here never runs, so arguments that
 * a store would refuse cannot fail a write that other calls share.
 */
export function checkArguments(args: unknown, limits: ArgumentLimits): CheckedArguments {
  if (args === undefined) return { ok: true, args: {} };
  if (!isPlainObject(args)) {
    const kind = args === null ? 'null' : Array.isArray(args) ? 'an array' : `a ${typeof args}`;
    return {
      ok: false,
      issues: [{ path: '', message: ARGUMENT_MESSAGES.notObject(kind) }],
      storable: typeof args !== 'string' || unstorableText(args) === undefined,
    };
  }
  // The depth first: JSON.stringify of a value nested thousands deep may overflow the stack.
  const unstorable = unstorableIssue(args, limits.maxDepth, '', 0);
  if (unstorable) return { ok: false, issues: [unstorable], storable: false };
  let json: string;
  try {
    json = JSON.stringify(args);
  } catch (cause) {
    const message = ARGUMENT_MESSAGES.notJson((cause as Error).message);
    return { ok: false, issues: [{ path: '', message }], storable: false };
  }
  // UTF-8 takes at most 3 bytes per UTF-16 unit, so the exact count is needed only near the limit.
  const bytes = json.length * 3 > limits.maxBytes ? Buffer.byteLength(json) : json.length;
  if (bytes > limits.maxBytes) {
    const message = ARGUMENT_MESSAGES.tooLarge(bytes, limits.maxBytes);
    return { ok: false, issues: [{ path: '', message }], storable: false };
  }
  return { ok: true, args: json.includes('"__proto__"') ? withoutProtoKeys(json) : args };
}

/** Each id of a request that breaks the id rule (`idProblem`): the name, the session, and the call and message ids when given. */
export function requestIdIssues(
  request: { name?: unknown; sessionId?: unknown; callId?: unknown; messageId?: unknown },
  maxChars: number,
): CallIssue[] {
  if (typeof request !== 'object' || request === null) {
    return [{ path: '', message: NOT_A_CALL_MESSAGE }];
  }
  const issues: CallIssue[] = [];
  checkId(issues, 'name', request.name, maxChars);
  checkId(issues, 'sessionId', request.sessionId, maxChars);
  if (request.callId !== undefined) checkId(issues, 'callId', request.callId, maxChars);
  if (request.messageId !== undefined) checkId(issues, 'messageId', request.messageId, maxChars);
  return issues;
}

/** Adds the id's issue, if it has one. (A function of its own, not a closure: every call checks its ids.) */
function checkId(issues: CallIssue[], path: string, value: unknown, maxChars: number): void {
  const problem = idProblem(value, maxChars);
  if (problem !== undefined) issues.push({ path, message: problem });
}

/** The most times one call's session is told it still runs (`notifyAfterMs`). */
export const MAX_NOTIFY_AFTER = 10;

/** The request's issues: its ids' (`requestIdIssues`), and `notifyAfterMs` when it is not a time or a short list of times. */
export function requestIssues(
  request: Parameters<typeof requestIdIssues>[0] & { notifyAfterMs?: unknown },
  maxChars: number,
): CallIssue[] {
  const issues = requestIdIssues(request, maxChars);
  if (issues.length > 0 || request.notifyAfterMs === undefined) return issues;
  const given = request.notifyAfterMs;
  const times = Array.isArray(given) ? given : [given];
  const fits = (time: unknown) => typeof time === 'number' && Number.isFinite(time) && time > 0;
  if (times.length === 0 || times.length > MAX_NOTIFY_AFTER || !times.every(fits)) {
    issues.push({ path: 'notifyAfterMs', message: ARGUMENT_MESSAGES.notifyAfter(MAX_NOTIFY_AFTER) });
  }
  return issues;
}

/** The times of a `notifyAfterMs` that `requestIssues` accepted, in order, each once. */
export function notifyTimes(given: number | readonly number[]): number[] {
  return [...new Set(Array.isArray(given) ? given : [given])].sort((a, b) => a - b);
}
