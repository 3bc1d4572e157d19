import { type AnyTool, toMcpTool } from '@baton/contracts';
import type { FastifyDynamicSwaggerOptions } from '@fastify/swagger';
import type { FastifySchema } from 'fastify';
import { z } from 'zod';
import { CallFields, CallRequest, type Endpoint } from './api.js';
import {
  ApiError,
  CallError,
  CallPage,
  CallRecord,
  CallReply,
  Health,
  Notification,
  WebhookDelivery,
} from './api-replies.js';
import { VERSION } from './version.js';

/**
 * The OpenAPI document is `@fastify/swagger`'s, made from the schemas each route is registered
 * with: the same zod schemas that validate the request (see plugin.ts), and those of its answers.
 */

type Json = Record<string, unknown>;

/** The schemas the document names (its components), each used by reference: a generated client gets named types. */
const NAMED = z.registry<{ id: string }>();
for (const [id, schema] of Object.entries({
  ApiError,
  CallError,
  CallReply,
  CallRecord,
  CallPage,
  Notification,
  WebhookDelivery,
  Health,
  // Documented by its fields: `arguments` is there only to be refused with a hint.
  CallRequest: CallFields,
})) {
  NAMED.add(schema, { id });
}

const COMPONENTS = '#/components/schemas/';

/**
 * A JSON Schema as OpenAPI 3.0 takes it: each `$ref` to a named schema's local definition made a
 * reference to the document's component, `const` as a one-value `enum`, and a type list with
 * `null` as `nullable` (3.0 has neither).
 */
function forOpenApi(value: unknown): unknown {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return value;
  const { $ref, const: only, type, ...rest } = value as Json;
  const schema: Json = {};
  for (const [key, inner] of Object.entries(rest)) {
    if (SCHEMA_MAPS.has(key) && typeof inner === 'object' && inner !== null) {
      schema[key] = Object.fromEntries(Object.entries(inner).map(([name, each]) => [name, forOpenApi(each)]));
    } else if (SCHEMAS.has(key)) {
      schema[key] = Array.isArray(inner) ? inner.map(forOpenApi) : forOpenApi(inner);
    } else schema[key] = inner;
  }
  if (typeof $ref === 'string') schema.$ref = $ref.replace(/^#\/(definitions|\$defs)\//, COMPONENTS);
  if (only !== undefined) schema.enum = [only];
  if (Array.isArray(type)) {
    const types = type.filter((name) => name !== 'null');
    if (types.length < type.length) schema.nullable = true;
    if (types.length === 1) schema.type = types[0];
    else if (types.length > 1) schema.anyOf = types.map((name) => ({ type: name }));
  } else if (type !== undefined) schema.type = type;
  return schema;
}

/** The keywords whose value is a map of schemas, and those whose value is a schema or a list of them. */
const SCHEMA_MAPS = new Set(['properties', 'patternProperties', 'definitions', '$defs', 'dependentSchemas']);
const SCHEMAS = new Set([
  'items',
  'prefixItems',
  'additionalProperties',
  'allOf',
  'anyOf',
  'oneOf',
  'not',
  'if',
  'then',
  'else',
  'contains',
  'propertyNames',
]);

/** `schema` in the document, the named schemas in it by reference. */
function toSchema(schema: z.ZodType, io: 'input' | 'output'): Json {
  // The named schemas are defined once, in the components (see namedSchemas).
  const {
    $schema: _dialect,
    definitions: _named,
    ...json
  } = z.toJSONSchema(schema, {
    target: 'draft-7',
    io,
    unrepresentable: 'any',
    metadata: NAMED,
  });
  return forOpenApi(json) as Json;
}

/** The named schemas, for the document's components. */
function namedSchemas(): Record<string, Json> {
  const { schemas } = z.toJSONSchema(NAMED, {
    target: 'draft-7',
    io: 'output',
    unrepresentable: 'any',
    uri: (id) => `${COMPONENTS}${id}`,
  });
  return Object.fromEntries(
    Object.entries(schemas).map(([id, { $id: _id, $schema: _dialect, ...schema }]) => [
      id,
      forOpenApi(schema) as Json,
    ]),
  );
}

/**
 * `ToolCall`, the body of `POST /v1/calls`: one of the server's tools by its name, each with its
 * own arguments' schema (`ToolCall.<name>`), so a generated client types `args` by tool.
 */
function toolCallSchemas(tools: readonly AnyTool[]): Record<string, Json> {
  const { properties, required } = toSchema(z.object(CallFields.shape), 'input') as {
    properties: Json;
    required: string[];
  };
  if (tools.length === 0) return { ToolCall: { $ref: `${COMPONENTS}CallRequest` } };
  const each = Object.fromEntries(
    tools.map((tool) => {
      const { $schema: _dialect, ...args } = forOpenApi(toMcpTool(tool).inputSchema) as Json;
      const call = {
        type: 'object',
        description: tool.description,
        properties: { ...properties, name: { type: 'string', enum: [tool.name] }, args },
        required,
        additionalProperties: false,
      };
      return [`ToolCall.${tool.name}`, call];
    }),
  );
  const refs = Object.keys(each).map((id) => `${COMPONENTS}${id}`);
  return {
    ...each,
    ToolCall: {
      oneOf: refs.map(($ref) => ({ $ref })),
      discriminator: {
        propertyName: 'name',
        mapping: Object.fromEntries(tools.map((tool, i) => [tool.name, refs[i]])),
      },
    },
  };
}

const NEEDS_TOKEN = { description: 'No token, or a token the server does not know (when it has tokens)' };

/**
 * The document's head: `@fastify/swagger` adds a path for each route; the components are the named
 * schemas and the calls of `tools` (read when the document is first asked for).
 */
export const swaggerOptions = (tools: () => readonly AnyTool[]): FastifyDynamicSwaggerOptions => ({
  openapi: {
    openapi: '3.0.3',
    info: {
      title: 'Baton',
      version: VERSION,
      description:
        'Runs the tool calls of LLM agents. The MCP endpoint is at /mcp (Streamable HTTP); the docs page is at /docs.',
    },
    components: { securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } } },
    security: [{ bearer: [] }],
  },
  transformObject: (document) => {
    if (!('openapiObject' in document)) return document.swaggerObject;
    const { openapiObject } = document;
    const schemas = { ...namedSchemas(), ...toolCallSchemas(tools()) };
    return { ...openapiObject, components: { ...openapiObject.components, schemas } } as typeof openapiObject;
  },
});

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
    ...(endpoint.body
      ? {
          body:
            endpoint.body === CallRequest
              ? { $ref: `${COMPONENTS}ToolCall` }
              : toSchema(endpoint.body, 'input'),
        }
      : {}),
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
