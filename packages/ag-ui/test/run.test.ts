import { AGENT_BUDGET_MS, agentLoopRuntime, eventually, promoteWhenStarted } from '@baton/test-support';
import { afterEach, describe, expect, it } from 'vitest';
import { BATON_CALL_ACTIVITY } from '../src/index.js';
import { agentServer, frontEnd } from './front-end.js';

const closing: (() => unknown)[] = [];
afterEach(async () => {
  for (const close of closing.splice(0)) await close();
});

async function setUp() {
  const suite = agentLoopRuntime();
  const server = await agentServer(suite.runtime);
  closing.push(() => suite.runtime.close(), server.close);
  const ui = frontEnd(server.url);
  const callId = (toolCallId: string) => `thread-1/${toolCallId}`;
  return { ...suite, server, ui, callId };
}

describe('@baton/ag-ui: a run’s tool calls as Baton calls, with @ag-ui/client’s own HttpAgent over HTTP and SSE', () => {
  it('answers a fast call in the run: its tool call, its result, and what the model said of it', async () => {
    const { ui } = await setUp();
    const events = await ui.run({ call: { tool: 'look_up', args: { word: 'tide' }, id: 'tool-1' } });
    expect(events.map((event) => event.type)).toEqual([
      'RUN_STARTED',
      'TOOL_CALL_START',
      'TOOL_CALL_ARGS',
      'TOOL_CALL_END',
      'TOOL_CALL_RESULT',
      'TEXT_MESSAGE_START',
      'TEXT_MESSAGE_CONTENT',
      'TEXT_MESSAGE_END',
      'RUN_FINISHED',
    ]);
    expect(ui.resultsOf('tool-1').map((result) => result.content)).toEqual(['tide: a word']);
    expect(ui.said()).toEqual(['told: tide: a word']);
  });

  it('shows a promoted call as a running activity, and gives its result once, in a later run, for the original call', async () => {
    const { ui, runtime, clock, callId, gateOf } = await setUp();
    const first = ui.run({ call: { tool: 'research', args: { topic: 'tides' }, id: 'tool-r' } });
    await promoteWhenStarted({ runtime, clock }, callId('tool-r'), AGENT_BUDGET_MS);
    await first;
    expect(ui.resultsOf('tool-r')).toHaveLength(1);
    expect(ui.resultsOf('tool-r')[0]?.content).toMatch(/continuing in the background/);
    expect(ui.activity('tool-r')?.content).toMatchObject({
      status: 'backgrounded',
      callId: callId('tool-r'),
    });
    expect(ui.agent.messages.find((message) => message.role === 'activity')).toMatchObject({
      activityType: BATON_CALL_ACTIVITY,
    });

    gateOf('tides').resolve('tides: high at noon');
    await eventually(async () => (await runtime.get(callId('tool-r')))?.status === 'succeeded', 'it ends');
    await ui.run({});
    expect(ui.resultsOf('tool-r')).toHaveLength(2);
    expect(ui.resultsOf('tool-r')[1]?.content).toContain('tides: high at noon');
    expect(ui.activity('tool-r')?.content).toMatchObject({ status: 'succeeded' });
    expect(ui.said().at(-1)).toContain('tides: high at noon');

    await ui.run({});
    expect(ui.resultsOf('tool-r')).toHaveLength(2);
    expect(await runtime.notifications.count({ sessionId: 'thread-1', status: 'queued' })).toBe(0);
  });

  it('cancels the run’s call still within its budget when the front end stops the run', async () => {
    const { ui, runtime, callId } = await setUp();
    const running = ui.run({ call: { tool: 'research', args: { topic: 'storms' }, id: 'tool-c' } });
    await eventually(
      async () => (await runtime.get(callId('tool-c')))?.status === 'inline',
      'it runs inline',
    );
    ui.agent.abortRun();
    await running;
    await eventually(
      async () => (await runtime.get(callId('tool-c')))?.status === 'cancelled',
      'it is cancelled',
    );
    expect(ui.resultsOf('tool-c')).toEqual([]);
  });

  it('finishes the run with an interrupt for a call that needs approval, and the resumed run runs it', async () => {
    const { ui, runtime, callId } = await setUp();
    const first = await ui.run({ call: { tool: 'delete_file', args: { path: 'a.txt' }, id: 'tool-d' } });
    expect(first.at(-1)).toMatchObject({
      type: 'RUN_FINISHED',
      outcome: { type: 'interrupt', interrupts: [{ reason: 'tool_approval', toolCallId: 'tool-d' }] },
    });
    expect((await runtime.get(callId('tool-d')))?.approval).toBe('pending');
    const [interrupt] = ui.agent.pendingInterrupts;
    expect(interrupt).toBeDefined();
    await ui.run(undefined, {
      resume: [{ interruptId: interrupt?.id ?? '', status: 'resolved', payload: { approved: true } }],
    });
    expect(ui.resultsOf('tool-d').map((result) => result.content)).toEqual(['deleted a.txt']);
    expect((await runtime.get(callId('tool-d')))?.approval).toBe('approved');
    expect(ui.said().at(-1)).toBe('told: deleted a.txt');
  });

  it('rejects the call when the resume says so, and tells the model why', async () => {
    const { ui, runtime, callId } = await setUp();
    await ui.run({ call: { tool: 'delete_file', args: { path: 'b.txt' }, id: 'tool-n' } });
    const [interrupt] = ui.agent.pendingInterrupts;
    await ui.run(undefined, {
      resume: [
        {
          interruptId: interrupt?.id ?? '',
          status: 'resolved',
          payload: { approved: false, reason: 'keep it' },
        },
      ],
    });
    expect((await runtime.get(callId('tool-n')))?.approval).toBe('rejected');
    expect(ui.resultsOf('tool-n')[0]?.content).toContain('keep it');
  });

  it('answers a call of a tool that is neither the runtime’s nor the front end’s "not found", in the run', async () => {
    const { ui } = await setUp();
    const events = await ui.run({ call: { tool: 'teleport', args: {}, id: 'tool-9' } });
    expect(events.map((event) => event.type)).toContain('TOOL_CALL_RESULT');
    expect(ui.resultsOf('tool-9').map((result) => result.content)).toEqual([
      expect.stringMatching(/teleport.*not found|not found.*teleport/i),
    ]);
    expect(ui.said()).toEqual([expect.stringMatching(/^told: /)]);
  });

  it('takes a body a JSON body parser already read (Express’s express.json() on the route)', async () => {
    const suite = agentLoopRuntime();
    const server = await agentServer(suite.runtime, { bodyParser: true });
    closing.push(() => suite.runtime.close(), server.close);
    const events = await frontEnd(server.url).run({
      call: { tool: 'look_up', args: { word: 'tide' }, id: 'tool-p' },
    });
    expect(events.map((event) => event.type)).toContain('TOOL_CALL_RESULT');
    expect(events.at(-1)?.type).toBe('RUN_FINISHED');
  });

  it('answers a request that is not a run with 400 and a stable code', async () => {
    const { server } = await setUp();
    const response = await fetch(server.url, { method: 'POST', body: JSON.stringify({ threadId: 1 }) });
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ error: { code: 'invalid_request' } });
  });
});
