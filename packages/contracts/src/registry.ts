import type { AnyTool } from './define-tool.js';
import { BatonError } from './errors.js';

/** The tools a runtime can call, by name. A duplicate name is refused when it is registered. */
export class ToolRegistry {
  readonly #tools = new Map<string, AnyTool>();

  constructor(tools: Iterable<AnyTool> = []) {
    for (const tool of tools) this.register(tool);
  }

  register(tool: AnyTool): this {
    if (this.#tools.has(tool.name)) {
      throw new BatonError('invalid_definition', `a tool named "${tool.name}" is already registered`);
    }
    this.#tools.set(tool.name, tool);
    return this;
  }

  unregister(name: string): boolean {
    return this.#tools.delete(name);
  }

  get(name: string): AnyTool | undefined {
    return this.#tools.get(name);
  }

  has(name: string): boolean {
    return this.#tools.has(name);
  }

  names(): string[] {
    return [...this.#tools.keys()];
  }

  definitions(): AnyTool[] {
    return [...this.#tools.values()];
  }

  /** The tools, in the order they were registered: `for (const tool of runtime.tools)`. */
  [Symbol.iterator](): IterableIterator<AnyTool> {
    return this.#tools.values();
  }

  get size(): number {
    return this.#tools.size;
  }
}
