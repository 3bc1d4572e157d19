import { defineTool, ToolError } from '@baton/contracts';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { gatedTool, settle, testRuntime } from './helpers.js';

function crawler() {
  const gated = gatedTool('crawl', { mode: 'auto' });
  return { ...gated, tool: { ...gated.tool, title: 'Site crawl' } };
}

const inlineOnly = defineTool({ name: 'quick', description: 'q', input: z.object({}), execute: () => 1 });

describe('spawn_background (the background runs)', () => {
  it('is there only when asked for', () => {
    expect(testRuntime([inlineOnly]).runtime.tools.has('spawn_background')).toBe(false);
    expect(
      testRuntime([inlineOnly], { builtins: ['spawn_background'] }).runtime.tools.has('spawn_background'),
    ).toBe(true);
  });

  it.each([
    [{ tool: 'nope', args: {} }, 'Unknown tool: nope'],
    [{ tool: 'spawn_background', args: {} }, 'spawn_background cannot target itself recursively'],
    [{ tool: 'quick', args: {} }, 'Tool does not support background execution: quick'],
    [{ tool: '  ', args: {} }, 'Missing required parameter: tool'],
  ])('refuses %j with the seed words', async (args, message) => {
    const { runtime } = testRuntime([inlineOnly, crawler().tool], { builtins: ['spawn_background'] });
    expect((await runtime.call({ name: 'spawn_background', args, sessionId: 's' })).error).toEqual({
      code: 'tool_error',
      message,
    });
  });

  it('starts the run at once, and tells the session when it completed, with its artifacts', async () => {
    const { tool, runs } = crawler();
    const { runtime } = testRuntime([tool], { builtins: ['spawn_background'] });
    const reply = await runtime.call({
      name: 'spawn_background',
      args: { tool: 'crawl', args: { site: 'docs' } },
      sessionId: 's1',
    });
    expect(reply.status).toBe('succeeded');
    const started = reply.output as Record<string, unknown>;
    const runId = started.run_id as string;
    expect(runId).toMatch(/^bg_[0-9a-f]{32}$/);
    expect(started).toEqual({
      run_id: runId,
      resource_id: runId,
      title: 'Site crawl',
      tool: 'crawl',
      status: 'running',
      signal_on_completion: true,
      artifact_dir: `/.background/${runId}`,
      log_path: `/.background/${runId}/output.log`,
      result_path: `/.background/${runId}/result.json`,
    });
    expect(runs[0]?.args).toEqual({ site: 'docs' });
    runs[0]?.resolve({ pages: 12 });
    await settle();
    const [notification] = await runtime.notifications.list({ sessionId: 's1' });
    expect(notification?.body).toBe(
      [
        'Background run completed.',
        `- run_id: ${runId}`,
        '- title: Site crawl',
        '- tool: crawl',
        '- summary: {"pages":12}',
        `- result_path: /.background/${runId}/result.json`,
        `- log_path: /.background/${runId}/output.log`,
      ].join('\n'),
    );
    expect(await runtime.artifact(runId, 'result.json')).toBe('{\n  "pages": 12\n}');
    expect(await runtime.artifact(runId, 'output.log')).toBe('');
  });

  it('tells the session when a run failed, with result.json saying so', async () => {
    const { tool, runs } = crawler();
    const { runtime } = testRuntime([tool], { builtins: ['spawn_background'] });
    const reply = await runtime.call({
      name: 'spawn_background',
      args: { tool: 'crawl', args: {}, title: 'Nightly crawl' },
      sessionId: 's1',
    });
    const runId = (reply.output as { run_id: string }).run_id;
    runs[0]?.reject(new ToolError('robots.txt forbids it'));
    await settle();
    const [notification] = await runtime.notifications.list({ sessionId: 's1' });
    expect(notification?.body).toMatch(
      /^Background run failed\.\n.*\n- title: Nightly crawl\n.*\n- summary: robots\.txt forbids it\n/s,
    );
    expect(JSON.parse((await runtime.artifact(runId, 'result.json')) ?? '')).toEqual({
      status: 'failed',
      error: 'robots.txt forbids it',
    });
  });

  it('stays silent when signal_on_completion is false', async () => {
    const { tool, runs } = crawler();
    const { runtime } = testRuntime([tool], { builtins: ['spawn_background'] });
    await runtime.call({
      name: 'spawn_background',
      args: { tool: 'crawl', args: {}, signal_on_completion: false },
      sessionId: 's1',
    });
    runs[0]?.resolve('done');
    await settle();
    expect(await runtime.notifications.list()).toEqual([]);
  });

  it('refuses a sixth active run in a session with the seed words', async () => {
    const { tool } = crawler();
    const { runtime } = testRuntime([tool], { builtins: ['spawn_background'] });
    const spawn = () =>
      runtime.call({ name: 'spawn_background', args: { tool: 'crawl', args: {} }, sessionId: 's1' });
    for (let i = 0; i < 5; i++) expect((await spawn()).status).toBe('succeeded');
    expect((await spawn()).error).toEqual({
      code: 'tool_error',
      message:
        'Maximum 5 active background runs per session. Wait for an existing run to finish before starting another.',
    });
  });
});
