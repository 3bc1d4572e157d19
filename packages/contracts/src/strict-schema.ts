import type { JsonSchema } from './schema.js';

/** Keywords OpenAI's strict mode refuses: a schema that uses one cannot be strict. */
const UNSUPPORTED = new Set([
  'allOf',
  'oneOf',
  'not',
  'if',
  'then',
  'else',
  'dependentRequired',
  'dependentSchemas',
  'patternProperties',
  'unevaluatedProperties',
  'unevaluatedItems',
  'propertyNames',
  'minProperties',
  'maxProperties',
  'contains',
  'minContains',
  'maxContains',
  'uniqueItems',
]);

/** Keywords whose value is one schema, and those whose value is a list or a map of schemas. */
const SUBSCHEMA = ['items', 'additionalItems'] as const;
const SUBSCHEMA_LIST = ['anyOf', 'prefixItems'] as const;
const SUBSCHEMA_MAP = ['properties', '$defs', 'definitions'] as const;

type Node = Record<string, unknown>;
const isNode = (value: unknown): value is Node =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

function strictNode(node: unknown): unknown {
  if (!isNode(node)) return typeof node === 'boolean' ? undefined : node;
  if (Object.keys(node).some((key) => UNSUPPORTED.has(key))) return undefined;
  const strict: Node = { ...node };
  for (const key of SUBSCHEMA) {
    if (!(key in node)) continue;
    strict[key] = strictNode(node[key]);
    if (strict[key] === undefined) return undefined;
  }
  for (const key of SUBSCHEMA_LIST) {
    const list = node[key];
    if (list === undefined) continue;
    if (!Array.isArray(list)) return undefined;
    const items = list.map(strictNode);
    if (items.includes(undefined)) return undefined;
    strict[key] = items;
  }
  for (const key of SUBSCHEMA_MAP) {
    const map = node[key];
    if (map === undefined) continue;
    if (!isNode(map)) return undefined;
    const entries = Object.entries(map).map(([name, schema]) => [name, strictNode(schema)] as const);
    if (entries.some(([, schema]) => schema === undefined)) return undefined;
    strict[key] = Object.fromEntries(entries);
  }
  const isObject = node.type === 'object' || isNode(node.properties);
  if (isObject) {
    // Strict mode wants every property required: an optional one would have to become nullable,
    // which the tool's own validation would then refuse.
    const names = Object.keys(isNode(node.properties) ? node.properties : {});
    const required = Array.isArray(node.required) ? node.required : [];
    if (names.some((name) => !required.includes(name))) return undefined;
    if (node.additionalProperties !== undefined && node.additionalProperties !== false) return undefined;
    strict.additionalProperties = false;
  }
  return strict;
}

/**
 * The schema as OpenAI's strict mode takes it (`strict: true` for function tools, the Responses
 * API and the Agents SDK): every object closed with `additionalProperties: false`, every property
 * required, and none of the keywords strict mode refuses. Undefined when the schema cannot say the
 * same thing that way (an optional property, open objects, `oneOf`...): the tool is then not strict.
 */
export function strictJsonSchema(schema: JsonSchema): JsonSchema | undefined {
  return strictNode(schema) as JsonSchema | undefined;
}
