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
 * Loads a module of tools for `baton serve`: its `runtime` export (or default), its `tools`
 * export (or a default list), or else every export that is a tool made with `defineTool`.
 */
export async function loadServedModule(path: string, cwd = process.cwd()): Promise<ServedModule> {
  const url = pathToFileURL(resolve(cwd, path)).href;
  let module: Record<string, unknown>;
  try {
    module = (await import(url)) as Record<string, unknown>;
  } catch (error) {
    throw new ConfigError(`cannot load ${path}: ${(error as Error).message ?? String(error)}`);
  }
  const main = module.default;
  if (isRuntime(module.runtime)) return { runtime: module.runtime };
  if (isRuntime(main)) return { runtime: main };
  const listed = Array.isArray(module.tools) ? module.tools : Array.isArray(main) ? main : undefined;
  const tools = listed ?? Object.values(module).filter(isTool);
  const notTools = tools.filter((tool) => !isTool(tool));
  if (notTools.length > 0) throw new ConfigError(`${path}: its tools must be made with defineTool()`);
  if (tools.length === 0) {
    throw new ConfigError(
      `${path} exports no tools: export tools made with defineTool(), a \`tools\` list, or a \`runtime\``,
    );
  }
  return { tools: tools as AnyTool[] };
}
