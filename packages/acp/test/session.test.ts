import { defineTool } from '@baton/contracts';
import { AGENT_BUDGET_MS, agentLoopRuntime, eventually, promoteWhenStarted } from '@baton/test-support';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { BATON_META, type ResultsWhen } from '../src/index.js';
import { editorOf, scriptedAgent, statusesOf } from './editor.js';

const closing: (() => unknown)[] = [];
afterEach(async () => {
  for (const close of closing.splice(0)) await close();
});

/** A runtime, an agent on it, and an editor connected to the agent. */
async function setUp(results: ResultsWhen = 'next_turn', answer?: Parameters<typeof editorOf>[1]) {
  const suite = agentLoopRuntime((gateOf) => [
    defineTool({
      name: 'build',
      description: 'Builds the project; shows how far it is',
      input: z.object({ target: z.string() }),
      execution: { mode: 'auto' },
      async execute({ target }, ctx) {
        ctx.status(`building ${target}`);
        ctx.progress({ current: 1, total: 3, unit: 'steps' });
        ctx.log('stdout', 'compiled 12 files\n');
        return gateOf(target).promise;
      },
    }),
  ]);
  const editor = await editorOf(scriptedAgent(suite.runtime, results), answer);
  closing.push(() => suite.runtime.close(), editor.close);
  const sessionId = await editor.newSession();
  const callId = (toolCallId: string) => `${sessionId}/${toolCallId}`;
  return { ...suite, editor, sessionId, callId };
}

/** How many reports of the tool call say it ended (completed or failed). */
const endsOf = (reports: readonly { status?: string | null }[]) =>
  reports.filter((report) => report.status === 'completed' || report.status === 'failed').length;

describe('@baton/acp: an ACP agent’s tool calls as Baton calls, with the SDK’s own client and agent', () => {
  it('reports a fast call as a tool call that is announced, then completed with its result, in the turn', async () => {
    const { editor, sessionId } = await setUp();
    const call = { tool: 'look_up', args: { word: 'tide' }, id: 'tool-1' };
    expect(await editor.prompt(sessionId, { call })).toMatchObject({ stopReason: 'end_turn' });
    const reports = editor.reportsOf('tool-1');
    expect(reports[0]).toMatchObject({
      sessionUpdate: 'tool_call',
      title: 'look_up',
      status: 'pending',
      rawInput: { word: 'tide' },
    });
    expect(statusesOf(reports)).toEqual(['pending', 'in_progress', 'completed']);
    expect(reports.at(-1)).toMatchObject({
      status: 'completed',
      rawOutput: 'tide: a word',
      content: [{ type: 'content', content: { type: 'text', text: 'tide: a word' } }],
    });
    expect(editor.said()).toEqual(['told: tide: a word']);
  });

  it('shows a running call’s status text, progress and log tail as it goes', async () => {
    const { editor, sessionId, runtime, clock, callId, gateOf } = await setUp();
    const turn = editor.prompt(sessionId, { call: { tool: 'build', args: { target: 'app' }, id: 'tool-b' } });
    await promoteWhenStarted({ runtime, clock }, callId('tool-b'), AGENT_BUDGET_MS);
    await turn;
    const texts = (report: { content?: unknown }) =>
      ((report.content ?? []) as { content: { text: string } }[]).map((each) => each.content.text);
    const running = editor.reportsOf('tool-b').filter((report) => report.status === 'in_progress');
    expect(running.map(texts)).toContainEqual(['building app', '1/3 steps', 'compiled 12 files\n']);
    gateOf('app').resolve('built');
  });

  it('keeps a promoted call in progress past its turn, and completes it once at the next turn (ACP v1)', async () => {
    const { editor, sessionId, runtime, clock, callId, gateOf } = await setUp('next_turn');
    const turn = editor.prompt(sessionId, {
      call: { tool: 'research', args: { topic: 'tides' }, id: 'tool-r' },
    });
    await promoteWhenStarted({ runtime, clock }, callId('tool-r'), AGENT_BUDGET_MS);
    expect(await turn).toMatchObject({ stopReason: 'end_turn' });
    const acknowledged = editor.reportsOf('tool-r').at(-1);
    expect(acknowledged).toMatchObject({
      status: 'in_progress',
      _meta: { [BATON_META]: { callId: callId('tool-r'), status: 'backgrounded' } },
    });
    expect(editor.said()[0]).toMatch(/^told: .*continuing in the background/);

    gateOf('tides').resolve('tides: high at noon');
    await eventually(
      async () => (await runtime.get(callId('tool-r')))?.status === 'succeeded',
      'the research ends',
    );
    // Between turns, ACP v1 has nothing to say it with.
    expect(endsOf(editor.reportsOf('tool-r'))).toBe(0);

    await editor.prompt(sessionId, {});
    expect(editor.reportsOf('tool-r').at(-1)).toMatchObject({
      status: 'completed',
      rawOutput: 'tides: high at noon',
    });
    expect(editor.said().at(-1)).toContain('back: ');
    expect(editor.said().at(-1)).toContain('tides: high at noon');
    await editor.prompt(sessionId, {});
    expect(endsOf(editor.reportsOf('tool-r'))).toBe(1);
    expect(editor.said().filter((text) => text.includes('tides: high at noon'))).toHaveLength(1);
    expect(await runtime.notifications.count({ sessionId, status: 'queued' })).toBe(0);
  });

  it('completes a promoted call as soon as it ends while the session is idle (when_idle, ACP v2’s lifecycle)', async () => {
    const { editor, sessionId, runtime, clock, callId, gateOf } = await setUp('when_idle');
    const turn = editor.prompt(sessionId, {
      call: { tool: 'research', args: { topic: 'tides' }, id: 'tool-r' },
    });
    await promoteWhenStarted({ runtime, clock }, callId('tool-r'), AGENT_BUDGET_MS);
    await turn;
    expect(endsOf(editor.reportsOf('tool-r'))).toBe(0);

    gateOf('tides').resolve('tides: high at noon');
    await eventually(() => endsOf(editor.reportsOf('tool-r')) === 1, 'the end is reported while idle');
    expect(editor.reportsOf('tool-r').at(-1)).toMatchObject({
      status: 'completed',
      rawOutput: 'tides: high at noon',
    });
    await eventually(() => editor.said().some((text) => text.startsWith('back: ')), 'the agent was given it');
    await editor.prompt(sessionId, {});
    expect(endsOf(editor.reportsOf('tool-r'))).toBe(1);
    expect(editor.said().filter((text) => text.startsWith('back: '))).toHaveLength(1);
    await eventually(
      async () => (await runtime.notifications.count({ sessionId, status: 'queued' })) === 0,
      'its notification is acknowledged',
    );
  });

  it('session/cancel cancels the turn’s call still within its budget, and not one that went to the background', async () => {
    const { editor, sessionId, runtime, clock, callId } = await setUp('next_turn');
    const first = editor.prompt(sessionId, {
      call: { tool: 'research', args: { topic: 'waves' }, id: 'tool-bg' },
    });
    await promoteWhenStarted({ runtime, clock }, callId('tool-bg'), AGENT_BUDGET_MS);
    await first;

    const second = editor.prompt(sessionId, {
      call: { tool: 'research', args: { topic: 'storms' }, id: 'tool-in' },
    });
    await eventually(
      async () => (await runtime.get(callId('tool-in')))?.status === 'inline',
      'the call runs inline',
    );
    await editor.cancel(sessionId);
    expect(await second).toMatchObject({ stopReason: 'cancelled' });
    expect((await runtime.get(callId('tool-in')))?.status).toBe('cancelled');
    expect(editor.reportsOf('tool-in').at(-1)).toMatchObject({ status: 'failed' });
    expect((await runtime.get(callId('tool-bg')))?.status).toBe('backgrounded');
    expect(await runtime.cancel(callId('tool-bg'))).toBe(true);
  });

  it('asks session/request_permission for a tool that needs approval, and runs it once allowed', async () => {
    const { editor, sessionId, runtime, callId } = await setUp('next_turn', async () => ({
      outcome: { outcome: 'selected', optionId: 'allow' },
    }));
    await editor.prompt(sessionId, { call: { tool: 'delete_file', args: { path: 'a.txt' }, id: 'tool-d' } });
    expect(editor.asked).toHaveLength(1);
    expect(editor.asked[0]).toMatchObject({
      sessionId,
      toolCall: { toolCallId: 'tool-d', rawInput: { path: 'a.txt' } },
    });
    expect(editor.reportsOf('tool-d').at(-1)).toMatchObject({
      status: 'completed',
      rawOutput: 'deleted a.txt',
    });
    expect((await runtime.get(callId('tool-d')))?.approval).toBe('approved');
    // Its end was given in that turn: the next turn does not report it again.
    await editor.prompt(sessionId, {});
    expect(endsOf(editor.reportsOf('tool-d'))).toBe(1);
    expect(await runtime.notifications.list({ sessionId: `${sessionId}`, status: 'queued' })).toEqual([]);
  });

  it('rejects the call when the user rejects it, or when the turn is cancelled while it asks', async () => {
    const { editor, sessionId, runtime, callId } = await setUp('next_turn', async (request, signal) => {
      if (request.toolCall.toolCallId === 'tool-no')
        return { outcome: { outcome: 'selected', optionId: 'reject' } };
      await new Promise((resolve) => signal.addEventListener('abort', resolve));
      return { outcome: { outcome: 'cancelled' } };
    });
    await editor.prompt(sessionId, { call: { tool: 'delete_file', args: { path: 'a.txt' }, id: 'tool-no' } });
    expect(editor.reportsOf('tool-no').at(-1)).toMatchObject({ status: 'failed' });
    expect(editor.said().at(-1)).toContain('rejected by the user');
    expect((await runtime.get(callId('tool-no')))?.approval).toBe('rejected');

    const asking = editor.prompt(sessionId, {
      call: { tool: 'delete_file', args: { path: 'b.txt' }, id: 'tool-c' },
    });
    await eventually(() => editor.asked.length === 2, 'it asks');
    await editor.cancel(sessionId);
    await asking;
    expect((await runtime.get(callId('tool-c')))?.approval).toBe('rejected');
    expect(editor.said().at(-1)).toContain('the prompt turn was cancelled');
  });
});
