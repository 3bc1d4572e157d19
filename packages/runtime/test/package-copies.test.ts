import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { testRuntime } from './helpers.js';

// A second, separate instance of @baton/contracts, as an app gets when two versions are installed.
const builtContracts = fileURLToPath(import.meta.resolve('@baton/contracts'));
const copyDir = mkdtempSync(join(import.meta.dirname, '.contracts-copy-'));
copyFileSync(builtContracts, join(copyDir, 'index.js'));
copyFileSync(`${builtContracts}.map`, join(copyDir, 'index.js.map'));
const copy = (await import(
  pathToFileURL(join(copyDir, 'index.js')).href
)) as typeof import('@baton/contracts');

afterAll(() => rmSync(copyDir, { recursive: true, force: true }));

describe('tools made with another copy of the packages', () => {
  it('is a separate copy: its classes are not ours', async () => {
    const ours = await import('@baton/contracts');
    expect(copy.ToolError).not.toBe(ours.ToolError);
  });

  it("recognises the copy's ToolError, success() and connectionRequired() by brand", async () => {
    const failing = copy.defineTool({
      name: 'failing',
      description: 'f',
      input: z.object({}),
      execute: () => {
        throw new copy.ToolError('shown to the model');
      },
    });
    const rich = copy.defineTool({
      name: 'rich',
      description: 'r',
      input: z.object({}),
      execute: () => copy.success('value', { rawOutput: 'raw' }),
    });
    const needsLogin = copy.defineTool({
      name: 'needs_login',
      description: 'n',
      input: z.object({}),
      execute: () => copy.connectionRequired('slack'),
    });
    const { runtime } = testRuntime([failing, rich, needsLogin]);
    expect((await runtime.call({ name: 'failing', sessionId: 's' })).error).toEqual({
      code: 'tool_error',
      message: 'shown to the model',
    });
    expect(await runtime.call({ name: 'rich', sessionId: 's' })).toMatchObject({
      status: 'succeeded',
      output: 'value',
    });
    expect((await runtime.call({ name: 'needs_login', sessionId: 's' })).error?.code).toBe(
      'connection_required',
    );
  });
});
