import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Runtime } from '@baton/runtime';
import { agentLoopRuntime } from '@baton/test-support';
import { filter, firstValueFrom } from 'rxjs';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { asker, SESSION } from './ask.js';
import {
  type AnswerBlock,
  lastMessageText,
  type MessagesRequest,
  MessagesStandIn,
} from './messages-stand-in.js';

const BUDGET_MS = 300;
/** Each whole `query()` starts Claude Code's own process: seconds on a busy two-core machine. */
const QUERY_TEST_MS = 60_000;

const home = mkdtempSync(join(tmpdir(), 'baton-claude-home-'));
afterAll(() => rmSync(home, { recursive: true, force: true }));

const opened: Runtime[] = [];
afterEach(async () => {
  await Promise.all(opened.splice(0).map((runtime) => runtime.close()));
});

let answering: (request: MessagesRequest) => AnswerBlock[] = () => [{ type: 'text', text: 'No script.' }];
let standIn: MessagesStandIn;
beforeAll(async () => {
  standIn = await MessagesStandIn.start((request) => answering(request));
  return () => standIn.close();
});

const say = (text: string): AnswerBlock[] => [{ type: 'text', text }];
const use = (id: string, tool: string, input: Record<string, unknown>): AnswerBlock[] => [
  { type: 'tool_use', id, name: `mcp__baton__${tool}`, input },
];

function setUp() {
  const { runtime, clock, gateOf } = agentLoopRuntime();
  opened.push(runtime);
  const ask = asker(runtime, standIn.url, home);
  const promoteWhenStarted = () =>
    firstValueFrom(runtime.events$.pipe(filter((event) => event.type === 'started'))).then(() =>
      clock.increment(BUDGET_MS),
    );
  const notified = () =>
    firstValueFrom(runtime.events$.pipe(filter((event) => event.type === 'notification')));
  return { runtime, gateOf, ask, promoteWhenStarted, notified };
}

/** The tool results the model was given in a request, as text. */
const toolResultsIn = (request: MessagesRequest | undefined) =>
  (request?.messages ?? [])
    .flatMap((message) => (typeof message.content === 'string' ? [] : message.content))
    .filter((block) => block.type === 'tool_result')
    .map((block) => JSON.stringify(block.content));

describe('Baton tools in a Claude Agent SDK query()', () => {
  it('answers a fast call inline through the in-process MCP server', { timeout: QUERY_TEST_MS }, async () => {
    const { runtime, ask } = setUp();
    answering = (request) =>
      lastMessageText(request).includes('tool_result')
        ? say('A tide is a word.')
        : use('toolu_1', 'look_up', { word: 'tide' });
    const { result } = await ask('What is a tide?');
    expect(result).toMatchObject({ subtype: 'success', result: 'A tide is a word.' });
    expect(toolResultsIn(standIn.requests.at(-1))).toEqual([expect.stringContaining('tide: a word')]);
    const page = await runtime.list({ sessionId: SESSION });
    expect(page.calls.map((call) => [call.toolName, call.status])).toEqual([['look_up', 'succeeded']]);
  });

  it('acknowledges a slow call at its budget, and brings its result into the next turn once', {
    timeout: QUERY_TEST_MS,
  }, async () => {
    const { gateOf, ask, promoteWhenStarted, notified } = setUp();
    answering = (request) =>
      lastMessageText(request).includes('tool_result')
        ? say('It goes on in the background.')
        : use('toolu_2', 'research', { topic: 'tides' });
    const promoted = promoteWhenStarted();
    const first = await ask('Research the tides.');
    await promoted;
    expect(first.result).toMatchObject({ result: 'It goes on in the background.' });
    expect(toolResultsIn(standIn.requests.at(-1))).toEqual([
      expect.stringContaining('continuing in the background'),
    ]);

    const notice = notified();
    gateOf('tides').resolve('tides: high at noon');
    await notice;
    const mentions = (request: MessagesRequest | undefined) =>
      JSON.stringify(request?.messages ?? []).split('tides: high at noon').length - 1;
    answering = () => say('High tide is at noon.');
    const second = await ask('So?', { resume: first.sessionId });
    expect(second.result).toMatchObject({ result: 'High tide is at noon.' });
    expect(mentions(standIn.requests.at(-1))).toBe(1);
    answering = () => say('Nothing new.');
    const third = await ask('Anything else?', { resume: second.sessionId });
    expect(third.result).toMatchObject({ result: 'Nothing new.' });
    expect(mentions(standIn.requests.at(-1))).toBe(1);
  });

  it('waits for a call in the background with wait_background', { timeout: QUERY_TEST_MS }, async () => {
    const { gateOf, ask, promoteWhenStarted } = setUp();
    answering = (request) => {
      const last = lastMessageText(request);
      const callId = /call_id\\":\\"([^\\]+)\\"/.exec(last)?.[1];
      if (last.includes('tides: high at noon')) return say('High tide is at noon.');
      if (callId !== undefined && last.includes('continuing in the background')) {
        gateOf('tides').resolve('tides: high at noon');
        return use('toolu_4', 'wait_background', { call_id: callId, timeout_ms: 10_000 });
      }
      return use('toolu_3', 'research', { topic: 'tides' });
    };
    const promoted = promoteWhenStarted();
    const { result } = await ask('Research the tides, and wait for it.');
    await promoted;
    expect(result).toMatchObject({ result: 'High tide is at noon.' });
  });

  it('cancels a call in the background with cancel_background, and tells of its end in the next turn', {
    timeout: QUERY_TEST_MS,
  }, async () => {
    const { runtime, ask, promoteWhenStarted, notified } = setUp();
    let callId = '';
    answering = (request) => {
      const last = lastMessageText(request);
      if (last.includes('continuing in the background')) {
        callId = /call_id\\":\\"([^\\]+)\\"/.exec(last)?.[1] ?? '';
        return say('It goes on in the background.');
      }
      if (last.includes('tool_result')) return say('Cancelled.');
      if (callId === '') return use('toolu_7', 'research', { topic: 'tides' });
      return use('toolu_8', 'cancel_background', { call_id: callId });
    };
    const promoted = promoteWhenStarted();
    const first = await ask('Research the tides.');
    await promoted;
    const notice = notified();
    const second = await ask('Stop it.', { resume: first.sessionId });
    expect(second.result).toMatchObject({ result: 'Cancelled.' });
    expect(toolResultsIn(standIn.requests.at(-1)).at(-1)).toContain('cancelled');
    expect(await runtime.get(callId)).toMatchObject({ status: 'cancelled' });
    await notice;
    answering = () => say('Noted.');
    await ask('And?', { resume: second.sessionId });
    expect(JSON.stringify(standIn.requests.at(-1)?.messages).split('Task cancelled').length - 1).toBe(1);
  });

  it('records a tool that needs approval as approved by the SDK permission for it', {
    timeout: QUERY_TEST_MS,
  }, async () => {
    const { runtime, ask } = setUp();
    answering = (request) =>
      lastMessageText(request).includes('tool_result')
        ? say('Done.')
        : use('toolu_5', 'delete_file', { path: '/tmp/a' });
    const asked: string[] = [];
    const { result } = await ask('Delete /tmp/a.', {
      canUseTool: async (toolName, input) => {
        asked.push(toolName);
        return { behavior: 'allow', updatedInput: input };
      },
    });
    expect(result).toMatchObject({ result: 'Done.' });
    expect(asked).toEqual(['mcp__baton__delete_file']);
    const [call] = (await runtime.list({ sessionId: SESSION })).calls;
    expect(call).toMatchObject({ toolName: 'delete_file', status: 'succeeded', approval: 'approved' });
  });

  it('makes no call the SDK permission denied', { timeout: QUERY_TEST_MS }, async () => {
    const { runtime, ask } = setUp();
    answering = (request) =>
      lastMessageText(request).includes('tool_result')
        ? say('I may not.')
        : use('toolu_6', 'delete_file', { path: '/tmp/a' });
    const { result } = await ask('Delete /tmp/a.', {
      canUseTool: async () => ({ behavior: 'deny', message: 'not that file' }),
    });
    expect(result).toMatchObject({ result: 'I may not.' });
    expect(toolResultsIn(standIn.requests.at(-1)).join()).toContain('not that file');
    expect((await runtime.list({ sessionId: SESSION })).calls).toEqual([]);
  });
});
