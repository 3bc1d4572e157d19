import { type AnyTool, type JsonSchema, type ToolRegistry, toJsonSchema } from '@baton/contracts';

/** SEP-2243's error code for a header that disagrees with the body. */
export const HEADER_MISMATCH = -32020;

/** An argument a tool mirrors in a request header: `x-mcp-header` on a top-level property. */
interface HeaderDeclaration {
  property: string;
  header: string;
}

const BASE64_SENTINEL = /^=\?base64\?(.*)\?=$/;
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/** The `x-mcp-header` declarations of a tool's input schema. */
function headerDeclarationsOf(schema: JsonSchema): HeaderDeclaration[] {
  const properties = (schema as { properties?: Record<string, unknown> }).properties ?? {};
  return Object.entries(properties).flatMap(([property, definition]) => {
    const header = (definition as Record<string, unknown> | null)?.['x-mcp-header'];
    return typeof header === 'string' && header !== '' ? [{ property, header }] : [];
  });
}

/** A header's value: trimmed (RFC 9110), Base64-decoded inside `=?base64?…?=`; undefined when that is not Base64. */
function headerValue(raw: string): string | undefined {
  const value = raw.trim();
  const encoded = BASE64_SENTINEL.exec(value)?.[1];
  if (encoded === undefined) return value;
  return BASE64.test(encoded) ? Buffer.from(encoded, 'base64').toString('utf8') : undefined;
}

/** How the body's value reads in a header. */
function asHeaderText(value: unknown): string {
  return typeof value === 'string' ? value : JSON.stringify(value);
}

/**
 * What is wrong with a `tools/call`'s `Mcp-Param-*` headers (SEP-2243), if anything: each argument
 * the tool declares with `x-mcp-header` and the body carries must come in its header too, with the
 * same value. Undefined when they agree.
 */
function paramHeaderProblem(
  declarations: readonly HeaderDeclaration[],
  args: unknown,
  headers: Headers,
): string | undefined {
  const values = (typeof args === 'object' && args !== null ? args : {}) as Record<string, unknown>;
  for (const { property, header } of declarations) {
    const body = values[property];
    if (body === undefined || body === null) continue;
    const name = `Mcp-Param-${header}`;
    const raw = headers.get(name);
    if (raw === null) return `the body carries ${property} but the ${name} header is absent`;
    const decoded = headerValue(raw);
    if (decoded === undefined) return `the ${name} header carries an invalid Base64 value`;
    const matches =
      typeof body === 'number' ? decoded !== '' && Number(decoded) === body : decoded === asHeaderText(body);
    if (!matches)
      return `the ${name} header says ${JSON.stringify(decoded)} but the body carries ${property}=${JSON.stringify(body)}`;
  }
  return undefined;
}

/** Each tool's declarations, read once from its schema. */
const declared = new WeakMap<AnyTool, HeaderDeclaration[]>();

/** The header mismatch of a 2026-07-28 `tools/call` body, if it has one (see `paramHeaderProblem`). */
export function paramHeaderMismatch(
  tools: ToolRegistry,
  body: unknown,
  headers: Headers,
): string | undefined {
  const call = body as { method?: unknown; params?: { name?: unknown; arguments?: unknown } } | null;
  if (call?.method !== 'tools/call' || typeof call.params?.name !== 'string') return undefined;
  const tool = tools.get(call.params.name);
  if (!tool) return undefined;
  let declarations = declared.get(tool);
  if (!declarations) {
    declarations = headerDeclarationsOf(toJsonSchema(tool.input));
    declared.set(tool, declarations);
  }
  return declarations.length > 0
    ? paramHeaderProblem(declarations, call.params.arguments, headers)
    : undefined;
}
