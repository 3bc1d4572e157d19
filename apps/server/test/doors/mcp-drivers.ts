import type { CallerName, DoorDriver, DoorTool, Outcome } from './door-suite.js';
import { outcomeOfStatus } from './rest-driver.js';
import { ARGS, type World } from './world.js';

const LEGACY = '2025-11-25';
const MODERN = '2026-07-28';

interface Answer {
  id?: unknown;
  result?: { isError?: boolean; content?: Array<{ text?: string }> };
  error?: { message: string };
}

/** The JSON-RPC answers of a response, as JSON or as an SSE stream of them. */
async function answersOf(response: Response): Promise<Answer[]> {
  const text = await response.text();
  if (text === '') return [];
  const bodies = response.headers.get('content-type')?.includes('text/event-stream')
    ? text
        .split('\n')
        .filter((line) => line.startsWith('data: '))
        .map((line) => JSON.parse(line.slice(6)) as unknown)
    : [JSON.parse(text) as unknown];
  return bodies.flat() as Answer[];
}

/** A `tools/call`'s answer as an outcome. */
function outcomeOf(answer: Answer | undefined): Outcome {
  const words = answer?.error?.message ?? answer?.result?.content?.[0]?.text ?? '';
  if (answer?.result && !answer.result.isError) return 'allowed';
  if (/needs the scope/.test(words)) return 'forbidden';
  if (/Too many requests/.test(words)) return 'over_quota';
  if (/^No call .* is known/.test(words)) return 'not_found';
  throw new Error(`an answer no outcome reads: ${JSON.stringify(answer)}`);
}

type Call = { name: string; arguments: unknown };

/**
 * MCP over HTTP, JSON-RPC as a client sends it. `revision`: 2025-11-25 (each caller's own session)
 * or 2026-07-28 (stateless). `opener`: the token that opens a caller's session, when it is not the
 * one each request carries (a session whose token changes).
 */
export function mcpDriver(
  world: World,
  revision: typeof LEGACY | typeof MODERN,
  { opener }: { opener?: (caller: CallerName) => string } = {},
): DoorDriver {
  let id = 0;
  const sessions = new Map<CallerName, Promise<string>>();
  const post = (token: string, body: unknown, headers: Record<string, string> = {}) =>
    fetch(`${world.base}/mcp`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${token}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': revision,
        ...headers,
      },
      body: JSON.stringify(body),
    });
  const open = async (caller: CallerName): Promise<string> => {
    const token = opener?.(caller) ?? world.tokenOf(caller);
    const initialized = await post(token, {
      jsonrpc: '2.0',
      id: ++id,
      method: 'initialize',
      params: { protocolVersion: LEGACY, capabilities: {}, clientInfo: { name: 'doors', version: '1' } },
    });
    const session = initialized.headers.get('mcp-session-id');
    if (!session) throw new Error(`no session for ${caller}: ${initialized.status}`);
    await post(token, { jsonrpc: '2.0', method: 'notifications/initialized' }, { 'mcp-session-id': session });
    return session;
  };
  const request = (call: Call) =>
    revision === MODERN
      ? {
          jsonrpc: '2.0',
          id: ++id,
          method: 'tools/call',
          params: {
            ...call,
            _meta: {
              'io.modelcontextprotocol/protocolVersion': MODERN,
              'io.modelcontextprotocol/clientInfo': { name: 'doors', version: '1' },
              'io.modelcontextprotocol/clientCapabilities': {},
            },
          },
        }
      : { jsonrpc: '2.0', id: ++id, method: 'tools/call', params: call };
  /** Sends one call, or several as a batch; gives the HTTP status and the answers in order. */
  const send = async (caller: CallerName, calls: readonly Call[]) => {
    const requests = calls.map(request);
    let headers: Record<string, string> = {};
    if (revision === LEGACY) {
      let session = sessions.get(caller);
      if (!session) {
        session = open(caller);
        sessions.set(caller, session);
      }
      headers = { 'mcp-session-id': await session };
    } else {
      headers = { 'mcp-method': 'tools/call', 'mcp-name': calls[0]?.name ?? '' };
    }
    const response = await post(
      world.tokenOf(caller),
      requests.length === 1 ? requests[0] : requests,
      headers,
    );
    const answers = await answersOf(response);
    const byId = new Map(answers.map((answer) => [answer.id, answer]));
    return { status: response.status, answers: requests.map((each) => byId.get(each.id)) };
  };
  const one = async (caller: CallerName, call: Call) => {
    const { status, answers } = await send(caller, [call]);
    return { outcome: status === 200 ? outcomeOf(answers[0]) : outcomeOfStatus(status), answer: answers[0] };
  };
  const control =
    (name: string, extra: object = {}) =>
    async (caller: CallerName, callId: string) =>
      (await one(caller, { name, arguments: { call_id: callId, ...extra } })).outcome;
  const spawning = async (caller: CallerName, tool: DoorTool, schedule?: object) =>
    (
      await one(caller, {
        name: 'spawn_background',
        arguments: { tool, args: ARGS[tool], ...(schedule ? { schedule } : {}) },
      })
    ).outcome;
  return {
    async start(caller, tool) {
      const { outcome, answer } = await one(caller, { name: tool, arguments: ARGS[tool] });
      if (outcome !== 'allowed' || tool === 'echo') return { outcome };
      // Past its budget: the acknowledgement names the call.
      const told = JSON.parse(answer?.result?.content?.[0]?.text ?? '{}') as { call_id?: string };
      return told.call_id === undefined ? { outcome } : { outcome, callId: told.call_id };
    },
    spawn: (caller, tool) => spawning(caller, tool),
    schedule: (caller, tool) => spawning(caller, tool, { cron_expression: '0 0 1 1 *' }),
    ...(revision === LEGACY
      ? {
          async batch(caller: CallerName, tools: readonly DoorTool[]) {
            const { status, answers } = await send(
              caller,
              tools.map((tool) => ({ name: tool, arguments: ARGS[tool] })),
            );
            return status === 200 ? answers.map(outcomeOf) : tools.map(() => outcomeOfStatus(status));
          },
        }
      : {}),
    steer: control('steer_background', { message: 'faster' }),
    cancel: control('cancel_background'),
    read: control('check_background'),
  };
}
