import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineTool, ToolRegistry } from '../src/index.js';

const make = (name: string) =>
  defineTool({ name, description: name, input: z.object({}), execute: () => name });

describe('ToolRegistry', () => {
  it('registers, finds, lists and unregisters tools', () => {
    const registry = new ToolRegistry([make('a')]).register(make('b'));
    expect(registry.has('a')).toBe(true);
    expect(registry.get('b')?.name).toBe('b');
    expect(registry.names()).toEqual(['a', 'b']);
    expect(registry.definitions().map((tool) => tool.name)).toEqual(['a', 'b']);
    expect(registry.unregister('a')).toBe(true);
    expect(registry.unregister('a')).toBe(false);
    expect(registry.names()).toEqual(['b']);
  });

  it('is iterable, in the order the tools were registered', () => {
    const registry = new ToolRegistry([make('c'), make('a'), make('b')]);
    expect([...registry].map((tool) => tool.name)).toEqual(['c', 'a', 'b']);
    expect(registry.size).toBe(3);
  });

  it('refuses a duplicate name when it is registered, not at call time', () => {
    expect(() => new ToolRegistry([make('a'), make('a')])).toThrow('a tool named "a" is already registered');
  });
});
