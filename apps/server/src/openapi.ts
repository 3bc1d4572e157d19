import { z } from 'zod';
import { API, type Endpoint } from './api.js';

const toSchema = (schema: z.ZodType) => z.toJSONSchema(schema, { target: 'openapi-3.0', io: 'input' });

const ERROR = {
  type: 'object',
  properties: {
    error: {
      type: 'object',
      properties: {
        code: { type: 'string' },
        message: { type: 'string' },
        issues: {
          type: 'array',
          items: {
            type: 'object',
            properties: { path: { type: 'string' }, message: { type: 'string' } },
          },
        },
      },
      required: ['code', 'message'],
    },
  },
  required: ['error'],
};

/** Path or query parameters, one per property of an object schema. */
function parametersOf(where: 'path' | 'query', schema: z.ZodType | undefined) {
  if (!schema) return [];
  const json = toSchema(schema) as { properties?: Record<string, object>; required?: string[] };
  return Object.entries(json.properties ?? {}).map(([name, property]) => ({
    name,
    in: where,
    required: where === 'path' || (json.required ?? []).includes(name),
    schema: property,
    ...('description' in property ? { description: property.description } : {}),
  }));
}

/** Routes that answer without a token (see the plugin's public routes). */
const PUBLIC_URLS = new Set<string>([API.health.url, API.openapi.url]);

function operationOf(name: string, endpoint: Endpoint) {
  const contentType = endpoint.response.contentType ?? 'application/json';
  const open = PUBLIC_URLS.has(endpoint.url);
  return {
    operationId: name,
    summary: endpoint.summary,
    ...(open ? { security: [] } : {}),
    parameters: [...parametersOf('path', endpoint.params), ...parametersOf('query', endpoint.query)],
    ...(endpoint.body
      ? {
          requestBody: {
            required: true,
            content: { 'application/json': { schema: toSchema(endpoint.body) } },
          },
        }
      : {}),
    responses: {
      200: { description: endpoint.response.description, content: { [contentType]: {} } },
      ...(endpoint.params || endpoint.query || endpoint.body
        ? {
            400: {
              description: 'Each problem of the request, named',
              content: { 'application/json': { schema: ERROR } },
            },
          }
        : {}),
      ...(open
        ? {}
        : { 401: { description: 'No token, or a token the server does not know (when it has tokens)' } }),
      ...(endpoint.params ? { 404: { description: 'No such call (for this tenant)' } } : {}),
    },
  };
}

/** The OpenAPI 3.0 document of the HTTP API, made from the schemas the routes validate with. */
export function openApiDocument(): object {
  const paths: Record<string, Record<string, object>> = {};
  for (const [name, endpoint] of Object.entries(API) as Array<[string, Endpoint]>) {
    const path = endpoint.url.replace(/:(\w+)/g, '{$1}');
    paths[path] ??= {};
    paths[path][endpoint.method.toLowerCase()] = operationOf(name, endpoint);
  }
  // MCP's Streamable HTTP transport: JSON-RPC in its own framing, described by the MCP specification.
  const mcp = (method: string) => ({
    operationId: `mcp${method}`,
    summary: `MCP Streamable HTTP (${method}): the runtime's tools, with tasks`,
    externalDocs: { url: 'https://modelcontextprotocol.io/specification/2025-11-25/basic/transports' },
    responses: {
      200: { description: 'A JSON-RPC response, or an SSE stream of them' },
      401: { description: 'No token, or a token the server does not know (when it has tokens)' },
    },
  });
  paths['/mcp'] = { post: mcp('Post'), get: mcp('Get'), delete: mcp('Delete') };
  return {
    openapi: '3.0.3',
    info: {
      title: 'Baton',
      version: '0.1.0',
      description: 'Runs the tool calls of LLM agents. The MCP endpoint is at /mcp (Streamable HTTP).',
    },
    components: { securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } } },
    security: [{ bearer: [] }],
    paths,
  };
}
