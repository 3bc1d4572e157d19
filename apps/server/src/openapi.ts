import type { FastifyDynamicSwaggerOptions } from '@fastify/swagger';
import type { FastifySchema } from 'fastify';
import { z } from 'zod';
import type { Endpoint } from './api.js';
import { ApiError } from './api-replies.js';

/**
 * The OpenAPI document is `@fastify/swagger`'s, made from the schemas each route is registered
 * with: the same zod schemas that validate the request (see plugin.ts), and those of its answers.
 */

function toSchema(schema: z.ZodType, io: 'input' | 'output'): Record<string, unknown> {
  const { $schema: _dialect, ...json } = z.toJSONSchema(schema, {
    target: 'draft-7',
    io,
    unrepresentable: 'any',
  });
  return json;
}

const NEEDS_TOKEN = { description: 'No token, or a token the server does not know (when it has tokens)' };

/** The document's head: `@fastify/swagger` adds a path for each route. */
export const SWAGGER_OPTIONS: FastifyDynamicSwaggerOptions = {
  openapi: {
    openapi: '3.0.3',
    info: {
      title: 'Baton',
      version: '0.1.0',
      description:
        'Runs the tool calls of LLM agents. The MCP endpoint is at /mcp (Streamable HTTP); the docs page is at /docs.',
    },
    components: { securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } } },
    security: [{ bearer: [] }],
  },
};

/** A route's schema, for the document only: the route validates with zod itself. */
export function routeSchemaOf(name: string, endpoint: Endpoint, open: boolean): FastifySchema {
  const contentType = endpoint.response.contentType ?? 'application/json';
  const error = (description: string) => ({ description, ...toSchema(ApiError, 'output') });
  const success = endpoint.response.schema ? toSchema(endpoint.response.schema, 'output') : {};
  return {
    operationId: name,
    summary: endpoint.summary,
    ...(open ? { security: [] } : {}),
    ...(endpoint.params ? { params: toSchema(endpoint.params, 'input') } : {}),
    ...(endpoint.query ? { querystring: toSchema(endpoint.query, 'input') } : {}),
    ...(endpoint.body ? { body: toSchema(endpoint.body, 'input') } : {}),
    response: {
      200: { description: endpoint.response.description, content: { [contentType]: { schema: success } } },
      ...(endpoint.params || endpoint.query || endpoint.body
        ? { 400: error('Each problem of the request, named') }
        : {}),
      ...(open ? {} : { 401: error(NEEDS_TOKEN.description) }),
      ...(endpoint.params ? { 404: error('No such call (for this tenant)') } : {}),
    },
  } as FastifySchema;
}

/** MCP's Streamable HTTP transport: JSON-RPC in its own framing, described by the MCP specification. */
export const MCP_SCHEMA = {
  summary: "MCP Streamable HTTP: the runtime's tools, with tasks (2025-11-25 and 2026-07-28)",
  externalDocs: {
    description: 'The MCP transport',
    url: 'https://modelcontextprotocol.io/specification/2025-11-25/basic/transports',
  },
  response: {
    200: { description: 'A JSON-RPC response, or an SSE stream of them', type: 'object' },
    401: { description: NEEDS_TOKEN.description, type: 'object' },
  },
} as FastifySchema;
