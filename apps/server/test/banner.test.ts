import { defineTool } from '@baton/contracts';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { demoTools } from '../src/demo-tools.js';
import { toolToTry } from '../src/serve.js';

const tool = (name: string, execution: { readOnly?: boolean; needsApproval?: true } = {}) =>
  defineTool({ name, description: name, input: z.object({}), execution, execute: () => name });

describe("the start banner's sample call", () => {
  it('tries a read-only tool before one that may fail or change something, and one needing approval last', () => {
    expect(toolToTry([tool('a_failing_tool'), tool('look', { readOnly: true })])?.name).toBe('look');
    expect(
      toolToTry([tool('approve_me', { readOnly: true, needsApproval: true }), tool('plain')])?.name,
    ).toBe('plain');
    expect(toolToTry(demoTools)?.name).toBe('echo');
    expect(toolToTry([])).toBeUndefined();
  });
});
