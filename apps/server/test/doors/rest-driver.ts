import type { CallerName, DoorDriver, DoorTool, Outcome } from './door-suite.js';
import { ARGS, type World } from './world.js';

/** An HTTP answer of the API as an outcome: 2xx allowed, 403 forbidden, 404 not found, 429 over quota. */
export function outcomeOfStatus(status: number): Outcome {
  if (status >= 200 && status < 300) return 'allowed';
  if (status === 403) return 'forbidden';
  if (status === 404) return 'not_found';
  if (status === 429) return 'over_quota';
  throw new Error(`an answer no outcome reads: ${status}`);
}

/** What `spawn_background` answered, as an outcome: its run refused for the scope is the model's tool error. */
function spawnOutcome(status: number, body: { status?: string; error?: { message?: string } }): Outcome {
  if (status !== 200) return outcomeOfStatus(status);
  if (body.status === 'succeeded') return 'allowed';
  if (/needs the scope/.test(body.error?.message ?? '')) return 'forbidden';
  throw new Error(`spawn_background answered ${JSON.stringify(body)}`);
}

/** The REST API: `POST /v1/calls` (and `spawn_background` through it), messages, cancel, approve, `GET /v1/calls/:id`. */
export function restDriver(world: World): DoorDriver {
  const request = async (caller: CallerName, method: 'GET' | 'POST', path: string, body?: unknown) => {
    const response = await fetch(`${world.base}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${world.tokenOf(caller)}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return { status: response.status, body: (await response.json()) as Record<string, unknown> };
  };
  const call = (caller: CallerName, name: string, args: unknown) =>
    request(caller, 'POST', '/v1/calls', { name, args, sessionId: 'doors' });
  const spawning = async (caller: CallerName, tool: DoorTool, schedule?: object) => {
    const { status, body } = await call(caller, 'spawn_background', {
      tool,
      args: ARGS[tool],
      ...(schedule ? { schedule } : {}),
    });
    return spawnOutcome(status, body);
  };
  const onCall = (path: string, body?: unknown) => async (caller: CallerName, callId: string) =>
    outcomeOfStatus(
      (
        await request(
          caller,
          body === undefined ? 'GET' : 'POST',
          `/v1/calls/${encodeURIComponent(callId)}${path}`,
          body,
        )
      ).status,
    );
  return {
    async start(caller, tool) {
      const { status, body } = await call(caller, tool, ARGS[tool]);
      const outcome = outcomeOfStatus(status);
      return outcome === 'allowed' ? { outcome, callId: body.callId as string } : { outcome };
    },
    spawn: (caller, tool) => spawning(caller, tool),
    schedule: (caller, tool) => spawning(caller, tool, { cron_expression: '0 0 1 1 *' }),
    steer: onCall('/messages', { message: 'faster' }),
    cancel: onCall('/cancel', {}),
    approve: onCall('/approve', {}),
    read: onCall(''),
  };
}
