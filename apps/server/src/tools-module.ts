import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { AnyTool } from '@baton/contracts';
import type { Runtime } from '@baton/runtime';
import { ConfigError } from './config.js';

/** What a module given to `baton serve` offers: tools to run, or a runtime made already. */
export type ServedModule = { tools: AnyTool[] } | { runtime: Runtime };

function isTool(value: unknown): value is AnyTool {
  const tool = value as Partial<AnyTool> | null;
  return (
    typeof tool === 'object' &&
    tool !== null &&
    typeof tool.name === 'string' &&
    typeof tool.execute === 'function' &&
    typeof tool.validateInput === 'function'
  );
}

function isRuntime(value: unknown): value is Runtime {
  const runtime = value as Partial<Runtime> | null;
  return (
    typeof runtime === 'object' &&
    runtime !== null &&
    typeof runtime.call === 'function' &&
    'tools' in runtime
  );
}

/**
 * The line (and column) of the module where loading it failed: a syntax error's stack starts with
 * `file:///…/tools.mjs:3`, an error thrown as it runs names `file:///…/tools.mjs:5:7` in a frame.
 */
function whereIn(error: unknown, file: string): string | undefined {
  const stack = (error as Error | undefined)?.stack ?? '';
  const url = pathToFileURL(file).href;
  const at = new RegExp(`${escaped(url)}:(\\d+(?::\\d+)?)`).exec(stack)?.[1];
  if (at || !(error instanceof SyntaxError)) return at;
  // Node tells where a module's syntax error is only when it ends the process: ask `node --check`.
  const checked = spawnSync(process.execPath, ['--check', file], { encoding: 'utf8' });
  return new RegExp(`^${escaped(file)}:(\\d+)`).exec(checked.stderr ?? '')?.[1];
}

function escaped(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/**
 * What native `import()` cannot load but jiti can: a TypeScript file, ES module syntax in a
 * CommonJS project's `.js`, and a CommonJS module that `require`s an ES module on a Node without
 * `require(esm)`.
 */
const NEEDS_TRANSFORM =
  /Cannot use import statement outside a module|Unexpected token 'export'|ERR_REQUIRE_ESM|require\(\) of ES Module|Unknown file extension/;

/** The module's exports: by Node itself where it can, else through jiti (TypeScript, CommonJS, mixed). */
async function importModule(file: string): Promise<Record<string, unknown>> {
  if (!/\.[cm]?ts$/.test(file)) {
    try {
      return (await import(pathToFileURL(file).href)) as Record<string, unknown>;
    } catch (error) {
      const { code, message } = error as NodeJS.ErrnoException;
      if (!NEEDS_TRANSFORM.test(`${code ?? ''} ${message ?? ''}`)) throw error;
    }
  }
  const { createJiti } = await import('jiti');
  return (await createJiti(import.meta.url, { moduleCache: false }).import(file)) as Record<string, unknown>;
}

/** A CommonJS module's `module.exports` object, as `import()` gives it (its `default`). */
function exportsOf(module: Record<string, unknown>): Record<string, unknown> {
  const main = module.default;
  const isObject = typeof main === 'object' && main !== null && !Array.isArray(main);
  return isObject && !isTool(main) && !isRuntime(main)
    ? { ...(main as Record<string, unknown>), ...module }
    : module;
}

/**
 * Loads a module of tools for `baton serve`: its `runtime` export (or default), its `tools`
 * export (or a default list), or else every export that is a tool made with `defineTool`. ES
 * modules and CommonJS, JavaScript and TypeScript.
 */
export async function loadServedModule(path: string, cwd = process.cwd()): Promise<ServedModule> {
  const file = resolve(cwd, path);
  // Said in the user's words, not as Node's resolution from inside the server's own files.
  if (!existsSync(file)) {
    throw new ConfigError(
      `cannot load ${path}: there is no such file (${file}); give the path of your tools module`,
    );
  }
  let module: Record<string, unknown>;
  try {
    module = exportsOf(await importModule(file));
  } catch (error) {
    const where = whereIn(error, file);
    const name = error instanceof Error && error.name !== 'Error' ? `${error.name}: ` : '';
    throw new ConfigError(
      `cannot load ${path}: ${name}${(error as Error).message ?? String(error)}${where ? ` (${path}:${where})` : ''}`,
    );
  }
  const main = module.default;
  if (isRuntime(module.runtime)) return { runtime: module.runtime };
  if (isRuntime(main)) return { runtime: main };
  const listed = Array.isArray(module.tools) ? module.tools : Array.isArray(main) ? main : undefined;
  const tools = listed ?? [...new Set(Object.values(module).filter(isTool))];
  const notTools = tools.filter((tool) => !isTool(tool));
  if (notTools.length > 0) throw new ConfigError(`${path}: its tools must be made with defineTool()`);
  if (tools.length === 0) {
    throw new ConfigError(
      `${path} exports no tools: export tools made with defineTool(), a \`tools\` list, or a \`runtime\``,
    );
  }
  return { tools: tools as AnyTool[] };
}
