import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  AGENT_BUDGET_MS,
  agentLoopRuntime,
  eventually,
  promoteWhenStarted,
  RESTART_BUDGET_MS,
  recoveredAndNotified,
  restartingRuntime,
} from '@baton/test-support';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { editorV2Of, scriptedAgentV2 } from './editor-v2.js';

const closing: (() => unknown)[] = [];
afterEach(async () => {
  for (const close of closing.splice(0)) await close();
});
const dir = mkdtempSync(join(tmpdir(), 'baton-acp-v2-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function setUp() {
  const suite = agentLoopRuntime();
  const editor = await editorV2Of(scriptedAgentV2(suite.runtime));
  closing.push(() => suite.runtime.close(), editor.close);
  const sessionId = await editor.newSession();
  return { ...suite, editor, sessionId, callId: (toolCallId: string) => `${sessionId}/${toolCallId}` };
}

const endsOf = (reports: readonly { status?: string | null }[]) =>
  reports.filter((report) => ['completed', 'failed', 'cancelled'].includes(report.status ?? '')).length;

describe('@baton/acp on ACP v2 (the SDK’s experimental/v2 apps): background work in the session’s state', () => {
  it('reports a fast call as upserts, pending to completed, within a running turn that ends idle', async () => {
    const { editor, sessionId } = await setUp();
    await editor.prompt(sessionId, { call: { tool: 'look_up', args: { word: 'tide' }, id: 'tool-1' } });
    const reports = editor.reportsOf('tool-1');
    expect(reports[0]).toMatchObject({ status: 'pending', title: 'look_up' });
    expect(reports.at(-1)).toMatchObject({ status: 'completed', rawOutput: 'tide: a word' });
    expect(editor.states()).toEqual([
      { state: 'running', background: [] },
      { state: 'idle', background: [] },
    ]);
  });

  it('lists a promoted call as background work past its turn, and completes it once while idle', async () => {
    const { editor, sessionId, runtime, clock, callId, gateOf } = await setUp();
    const turn = editor.prompt(sessionId, {
      call: { tool: 'research', args: { topic: 'tides' }, id: 'tool-r' },
    });
    await promoteWhenStarted({ runtime, clock }, callId('tool-r'), AGENT_BUDGET_MS);
    await turn;
    expect(editor.states().at(-1)).toEqual({ state: 'idle', background: ['tool-r'] });
    expect(endsOf(editor.reportsOf('tool-r'))).toBe(0);

    gateOf('tides').resolve('tides: high at noon');
    await eventually(() => endsOf(editor.reportsOf('tool-r')) === 1, 'the end is reported while idle');
    await eventually(
      () => editor.states().at(-1)?.background.length === 0,
      'the background work no longer lists it',
    );
    // The end is reported before the snapshot that removes it, as v2 asks.
    const endAt = editor.updates.findIndex(
      (update) =>
        update.sessionUpdate === 'tool_call_update' && (update as { status?: string }).status === 'completed',
    );
    const removedAt = editor.updates.findLastIndex((update) => update.sessionUpdate === 'state_update');
    expect(endAt).toBeLessThan(removedAt);
    await editor.prompt(sessionId, {});
    expect(endsOf(editor.reportsOf('tool-r'))).toBe(1);
    expect(editor.said().filter((text) => text.startsWith('back: '))).toHaveLength(1);
  });

  it('cancels a call in the background by tool_call/cancel, reported cancelled', async () => {
    const { editor, sessionId, runtime, clock, callId } = await setUp();
    const turn = editor.prompt(sessionId, {
      call: { tool: 'research', args: { topic: 'storms' }, id: 'tool-c' },
    });
    await promoteWhenStarted({ runtime, clock }, callId('tool-c'), AGENT_BUDGET_MS);
    await turn;
    await editor.cancelToolCall(sessionId, 'tool-c');
    await eventually(
      () => editor.reportsOf('tool-c').at(-1)?.status === 'cancelled',
      'it is reported cancelled',
    );
    expect((await runtime.get(callId('tool-c')))?.status).toBe('cancelled');
  });

  it('across a restart on SQLite, the resumed session lists the call as background work, then completes it once', async () => {
    const path = join(dir, 'v2.db');
    const before = restartingRuntime(path, true);
    const first = await editorV2Of(scriptedAgentV2(before.runtime));
    const sessionId = await first.newSession();
    const turn = first.prompt(sessionId, {
      call: { tool: 'research', args: { topic: 'tides' }, id: 'tool-r' },
    });
    await promoteWhenStarted(before, `${sessionId}/tool-r`, RESTART_BUDGET_MS);
    await turn;
    first.close();
    await before.runtime.close();

    const after = restartingRuntime(path, false);
    const second = await editorV2Of(scriptedAgentV2(after.runtime));
    try {
      await second.resume(sessionId);
      await recoveredAndNotified(after, sessionId);
      await eventually(() => endsOf(second.reportsOf('tool-r')) === 1, 'the end is reported while idle');
      await second.prompt(sessionId, {});
      expect(endsOf(second.reportsOf('tool-r'))).toBe(1);
      expect(second.reportsOf('tool-r').at(-1)).toMatchObject({
        status: 'completed',
        rawOutput: 'tides: high at noon',
      });
      expect(second.states().at(-1)).toEqual({ state: 'idle', background: [] });
    } finally {
      second.close();
      await after.runtime.close();
    }
  }, 30_000);
});
