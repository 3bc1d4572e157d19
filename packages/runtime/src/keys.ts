/** The keys the runtime makes for others to keep: event keys, and the replay key of the durable context. */

/** The durable context: one key for every attempt of a call, for the services a tool calls. */
export function replayKey(sessionId: string, callId: string, toolName: string): string {
  return `baton:${sessionId}:${callId}:${toolName}`;
}

/** The key of an external event of a call: the same every time for the same call and name. */
export function eventKey(callId: string, name: string): string {
  // encodeURIComponent throws on a lone surrogate: the name is made well-formed first.
  return `baton-event:${encodeURIComponent(callId)}:${encodeURIComponent(name.toWellFormed())}`;
}

/** The call and the event name an event key was made of, or undefined for a string that is not one. */
function partsOfEventKey(key: string): { callId: string; name: string } | undefined {
  const [prefix, callId, name, ...rest] = key.split(':');
  if (prefix !== 'baton-event' || !callId || name === undefined || rest.length > 0) return undefined;
  try {
    return { callId: decodeURIComponent(callId), name: decodeURIComponent(name) };
  } catch {
    // A malformed escape (`%E0%A4%A`) is not a key this runtime made: it is answered as such.
    return undefined;
  }
}

/** The call an event key belongs to, or undefined for a string that is not an event key. */
export function callOfEventKey(key: string): string | undefined {
  return partsOfEventKey(key)?.callId;
}

/**
 * The name of the event a key is of (`message:3`, a tool's own name), without the call's id in it:
 * what a model or a client is shown of what a call waits for. Undefined for a key not made here.
 */
export function eventNameOfKey(key: string): string | undefined {
  return partsOfEventKey(key)?.name;
}

/** The id `checkStore` looks up: no call has it (ids are never empty). */
export const HEALTH_PROBE_CALL_ID = '';

/** The background runs: where a run's files are, by name. */
export function runPaths(runId: string): { artifactDir: string; logPath: string; resultPath: string } {
  const artifactDir = `/.background/${runId}`;
  return { artifactDir, logPath: `${artifactDir}/output.log`, resultPath: `${artifactDir}/result.json` };
}
