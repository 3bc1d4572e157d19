import type { JsonSchema } from './schema.js';

/** What a secret argument is shown as, wherever a call's arguments leave the runtime. */
export const REDACTED = '[redacted]';

/** Where an argument is: property names from the top, `*` for any item of an array. */
export type ArgPath = readonly string[];

type Node = Record<string, unknown>;
const isNode = (value: unknown): value is Node =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * The arguments an input schema marks secret: `writeOnly: true`, the JSON Schema word for a value
 * given but never read back (`z.string().meta({ writeOnly: true })` with zod). Followed through
 * `properties`, `items`, `anyOf` / `oneOf` / `allOf` and local `$ref`s.
 */
export function secretPathsOf(schema: JsonSchema): ArgPath[] {
  const root = schema as Node;
  const paths: ArgPath[] = [];
  const seen = new Set<unknown>();
  const visit = (node: unknown, path: ArgPath) => {
    if (!isNode(node)) return;
    if (node.writeOnly === true) {
      paths.push(path);
      return;
    }
    const ref = typeof node.$ref === 'string' ? resolved(root, node.$ref) : undefined;
    if (ref !== undefined && !seen.has(ref)) {
      seen.add(ref);
      visit(ref, path);
      seen.delete(ref);
    }
    if (isNode(node.properties)) {
      for (const [name, property] of Object.entries(node.properties)) visit(property, [...path, name]);
    }
    if (node.items !== undefined) visit(node.items, [...path, '*']);
    for (const key of ['anyOf', 'oneOf', 'allOf']) {
      const list = node[key];
      if (Array.isArray(list)) for (const each of list) visit(each, path);
    }
  };
  visit(root, []);
  return paths;
}

/** A `#/$defs/name`-style pointer into the same schema. */
function resolved(root: Node, ref: string): unknown {
  if (!ref.startsWith('#/')) return undefined;
  let node: unknown = root;
  for (const part of ref.slice(2).split('/')) {
    if (!isNode(node)) return undefined;
    node = node[part.replaceAll('~1', '/').replaceAll('~0', '~')];
  }
  return node;
}

/** A copy of the arguments with each one at a secret path shown as `[redacted]`; the same value when none is. */
export function redactedArgs(args: unknown, paths: readonly ArgPath[]): unknown {
  if (paths.length === 0) return args;
  let shown = args;
  for (const path of paths) shown = redactedAt(shown, path);
  return shown;
}

function redactedAt(value: unknown, path: ArgPath): unknown {
  if (path.length === 0) return value === undefined ? value : REDACTED;
  const [head, ...rest] = path as [string, ...string[]];
  if (head === '*') return Array.isArray(value) ? value.map((item) => redactedAt(item, rest)) : value;
  if (!isNode(value) || !Object.hasOwn(value, head)) return value;
  return { ...value, [head]: redactedAt(value[head], rest) };
}

/**
 * A copy of a call record (or anything naming its tool and arguments) with its tool's secret
 * arguments redacted: what a call shows wherever it leaves the runtime (an API, the inspector, a log).
 */
export function withSecretArgsRedacted<T extends { toolName: string; args?: unknown }>(
  tools: { get(name: string): { readonly secretArgs?: readonly ArgPath[] } | undefined },
  record: T,
): T {
  const paths = tools.get(record.toolName)?.secretArgs ?? [];
  if (paths.length === 0 || record.args === undefined) return record;
  return { ...record, args: redactedArgs(record.args, paths) };
}
