import type { IncomingMessage, ServerResponse } from 'node:http';
import { RunAgentInputSchema } from '@ag-ui/core/schemas';
import { EventEncoder } from '@ag-ui/encoder';
import { readJsonBody } from '@baton/contracts';
import type { Runtime } from '@baton/runtime';
import { type BatonAgUiOptions, batonAgUiRun } from './run.js';

/** The largest request body a run takes: a thread's messages, as JSON. */
export const MAX_RUN_INPUT_BYTES = 4 * 1024 * 1024;

export type AgUiHandlerOptions = Omit<BatonAgUiOptions, 'signal'>;

/** Why a request cannot be a run, as a JSON answer with a stable code. */
function refuse(res: ServerResponse, status: number, code: string, message: string): void {
  res.writeHead(status, { 'Content-Type': 'application/json' });
  res.end(JSON.stringify({ error: { code, message } }));
}

const NO_BODY = Symbol('no body');

/**
 * The request's JSON body: the one a body parser on the route already read (Express's
 * `express.json()` leaves it in `req.body`, and the stream empty), or read here within the bound.
 * `NO_BODY` once the request has been refused.
 */
async function bodyOf(req: IncomingMessage, res: ServerResponse): Promise<unknown> {
  const parsedBefore = (req as IncomingMessage & { body?: unknown }).body;
  if (parsedBefore !== undefined && typeof parsedBefore === 'object' && req.readableEnded)
    return parsedBefore;
  const body = await readJsonBody(req, { maxBytes: MAX_RUN_INPUT_BYTES });
  if (body.kind === 'too_large') {
    refuse(res, 413, 'payload_too_large', `A run's input is at most ${MAX_RUN_INPUT_BYTES} bytes.`);
    return NO_BODY;
  }
  if (body.kind === 'refused') {
    refuse(res, 413, 'payload_too_large', `The body is refused: ${body.refusal}.`);
    return NO_BODY;
  }
  try {
    return JSON.parse(new TextDecoder().decode(body.bytes));
  } catch {
    refuse(res, 400, 'invalid_request', 'The body is not JSON.');
    return NO_BODY;
  }
}

/**
 * An AG-UI endpoint for Node's `http` (and whatever takes its handlers: Express, Fastify's
 * `reply.raw`): `POST` a `RunAgentInput`, and the run's events come back as the client asked for
 * them (`Accept`: SSE by default, or AG-UI's binary encoding). A front end that goes away stops
 * the run: its calls still within their budget are cancelled, and the results it was given come
 * again in the next run.
 */
export function agUiHandler(
  runtime: Runtime,
  options: AgUiHandlerOptions,
): (req: IncomingMessage, res: ServerResponse) => Promise<void> {
  return async (req, res) => {
    if (req.method !== 'POST') {
      res.setHeader('Allow', 'POST');
      refuse(res, 405, 'method_not_allowed', 'An AG-UI run is a POST of its RunAgentInput.');
      return;
    }
    const json = await bodyOf(req, res);
    if (json === NO_BODY) return;
    const parsed = RunAgentInputSchema.safeParse(json);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      refuse(
        res,
        400,
        'invalid_request',
        `Not a RunAgentInput: ${issue?.path.join('.') || '(body)'}: ${issue?.message}`,
      );
      return;
    }
    const stopped = new AbortController();
    res.on('close', () => stopped.abort(new Error('the front end went away')));
    const encoder = new EventEncoder({ accept: req.headers.accept ?? 'text/event-stream' });
    res.writeHead(200, {
      'Content-Type': encoder.getContentType(),
      'Cache-Control': 'no-cache',
      Connection: 'keep-alive',
    });
    for await (const event of batonAgUiRun(runtime, parsed.data, { ...options, signal: stopped.signal })) {
      if (stopped.signal.aborted) break;
      res.write(encoder.encode(event));
    }
    res.end();
  };
}
