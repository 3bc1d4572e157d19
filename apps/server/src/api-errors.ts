import { isUtf8 } from 'node:buffer';
import { isBatonError, type JsonTextLimits, readJsonBody } from '@baton/contracts';
import type { FastifyInstance, FastifyReply } from 'fastify';

/** The API's answer to a request it refuses: `{ error: { code, message, ...extra } }` with `status`. */
export function fail(reply: FastifyReply, status: number, code: string, message: string, extra: object = {}) {
  return reply.code(status).send({ error: { code, message, ...extra } });
}

export function notFound(reply: FastifyReply, what = 'call') {
  return fail(reply, 404, 'not_found', `${what} not found`);
}

/** A body refused before it is parsed: its status, and the API's code and words for it. */
class BodyRefusal extends Error {
  constructor(
    readonly statusCode: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

/**
 * JSON bodies, read as bytes as they arrive: bytes that are not UTF-8 are refused, not turned into
 * U+FFFD in ids and arguments; and a body's shape is checked part by part before it is parsed, a
 * body past it refused without being kept (see readJsonBody). A POST that carries nothing (cancel,
 * approve, ack) may still say it is JSON. Fastify's own parser otherwise: it drops __proto__ and
 * constructor.prototype keys, as the runtime does with the arguments, rather than calling such a
 * body "not valid JSON".
 */
export function takeJsonBodies(app: FastifyInstance, bodyShape: JsonTextLimits): void {
  const parseJson = app.getDefaultJsonParser('remove', 'remove');
  const tooLarge = () => new BodyRefusal(413, 'payload_too_large', 'the body is larger than 1 MiB');
  app.addContentTypeParser('application/json', (request, payload, done) => {
    const maxBytes = request.routeOptions.bodyLimit ?? app.initialConfig.bodyLimit ?? 1024 * 1024;
    if (Number(request.headers['content-length'] ?? 0) > maxBytes) return done(tooLarge());
    readJsonBody(payload, { ...bodyShape, maxBytes }).then((body) => {
      if (body.kind === 'too_large') return done(tooLarge());
      if (body.kind === 'refused') {
        return done(new BodyRefusal(413, 'payload_too_large', `the body is refused: ${body.refusal}`));
      }
      const bytes = Buffer.from(body.bytes.buffer, body.bytes.byteOffset, body.bytes.byteLength);
      if (bytes.length === 0) return done(null, undefined);
      if (!isUtf8(bytes)) return done(new BodyRefusal(400, 'invalid_utf8', 'the body is not valid UTF-8'));
      parseJson(request, bytes.toString('utf8'), done);
    }, done);
  });
}

/** What the API answers for a route it has not, and for an error a route threw, in its own format. */
export function answerErrors(app: FastifyInstance, retryAfterSeconds: number): void {
  app.setNotFoundHandler((request, reply) =>
    fail(reply, 404, 'not_found', `no route ${request.method} ${request.url.split('?')[0]}`),
  );
  app.setErrorHandler((error: { statusCode?: number; message: string }, _request, reply) => {
    if (error instanceof BodyRefusal) return fail(reply, error.statusCode, error.code, error.message);
    // The runtime and the stores refuse bad input with a BatonError: the caller's mistake, a 400.
    if (isBatonError(error) && error.code === 'invalid_arguments') {
      return fail(reply, 400, 'invalid_request', error.message);
    }
    // The store could not be reached for as long as the runtime rides it out: come back later.
    if (isBatonError(error) && error.code === 'persistence_failed') {
      reply.header('retry-after', String(retryAfterSeconds));
      return fail(reply, 503, 'store_unavailable', `the store failed: ${error.message}`);
    }
    const status = error.statusCode ?? 500;
    if (status === 413) return fail(reply, 413, 'payload_too_large', 'the body is larger than 1 MiB');
    if (status < 500) return fail(reply, status, 'invalid_request', error.message);
    app.log.error(error);
    return fail(reply, 500, 'internal_error', 'the server failed to answer');
  });
}
