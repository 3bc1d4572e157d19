/**
 * End to end, in real processes: a model in an AI SDK loop (the test's process, a client runtime
 * on PostgreSQL) starts a research sub-agent that a `baton worker` runs, is acknowledged, steers it
 * twice, hears its two updates coalesced when idle; the worker is SIGKILLed and another started;
 * the sub-agent resumes after its last finished turn, and its result reaches the model once.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { batonNotifications, batonTools, responseMessagesOf } from '@baton/ai-sdk';
import { createRuntime, type Runtime } from '@baton/runtime';
import { postgresStore } from '@baton/store-postgres';
import { freshDatabase, type ThrowawayPostgres, throwawayPostgres } from '@baton/store-postgres/testing';
import { startWorker, type WorkerProcess } from '@baton/test-support';
import { generateText, type ModelMessage, stepCountIs } from 'ai';
import { MockLanguageModelV3 } from 'ai/test';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
// A plain ES module, shared with the workers.
import { researcher } from './sub-agent-tools.mjs';

const TOOLS = join(import.meta.dirname, 'sub-agent-tools.mjs');
const dir = mkdtempSync(join(tmpdir(), 'baton-sub-agent-'));
process.env.SUB_AGENT_DIR = dir;
const SESSION = 'chat-1';
const REPORT = 'Report (Focus on the moon. Cite your sources.): the tides follow the moon.';

let postgres: ThrowawayPostgres;
let store: string;
let runtime: Runtime | undefined;
const workers: WorkerProcess[] = [];
beforeAll(async () => {
  postgres = await throwawayPostgres();
  store = await freshDatabase(postgres.url, 'sub_agent');
}, 60_000);
afterAll(async () => {
  for (const { child } of workers) if (child.exitCode === null) child.kill('SIGKILL');
  await runtime?.close();
  await postgres.stop();
  rmSync(dir, { recursive: true, force: true });
});

type Prompt = Parameters<MockLanguageModelV3['doGenerate']>[0]['prompt'];
type Content = Awaited<ReturnType<MockLanguageModelV3['doGenerate']>>['content'];
const usage = {
  inputTokens: { total: 10, noCache: 10, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: 5, text: 5, reasoning: undefined },
};
const text = (value: string): Content[number] => ({ type: 'text', text: value });
const toolCall = (toolCallId: string, toolName: string, input: unknown): Content[number] => ({
  type: 'tool-call',
  toolCallId,
  toolName,
  input: JSON.stringify(input),
});

/** The caller's model, scripted step by step; it keeps every prompt it was given. */
function scriptedModel(steps: Content[]) {
  const prompts: Prompt[] = [];
  const model = new MockLanguageModelV3({
    doGenerate: async ({ prompt }) => {
      prompts.push(prompt);
      const content = steps.shift() ?? [text('(no more script)')];
      const calls = content.some((part) => part.type === 'tool-call');
      return {
        content,
        finishReason: { unified: calls ? 'tool-calls' : 'stop', raw: undefined },
        usage,
        warnings: [],
      };
    },
  });
  return { model, prompts };
}

const timesIn = (prompt: Prompt | undefined, what: string) =>
  JSON.stringify(prompt ?? []).split(what).length - 1;
const startOneWorker = async () => {
  const worker = await startWorker({
    store,
    module: TOOLS,
    env: { SUB_AGENT_DIR: dir, BATON_BUILTINS: 'steer_background' },
  });
  workers.push(worker);
  return worker;
};
const asked = () => readFileSync(join(dir, 'asked.log'), 'utf8').trim().split('\n');
const go = (turn: number) => writeFileSync(join(dir, `go-${turn}`), '');

describe('a research sub-agent in the background, steered, across a SIGKILL', () => {
  it('is acknowledged, steered twice, heard from when idle, and its result reaches the model once', {
    timeout: 120_000,
  }, async () => {
    writeFileSync(join(dir, 'asked.log'), '');
    const first = await startOneWorker();
    runtime = createRuntime({
      tools: [researcher],
      store: postgresStore({ connectionString: store }),
      role: 'client',
      builtins: ['steer_background'],
    });
    await runtime.ready;
    const client = runtime;
    const tools = batonTools(client, { sessionId: SESSION });
    const notifications = batonNotifications(client, { sessionId: SESSION });
    const { model, prompts } = scriptedModel([
      [toolCall('c-1', 'researcher', { question: 'Why do tides happen?' })],
      [text('I started a researcher.')],
      [toolCall('c-2', 'steer_background', { call_id: 'c-1', message: 'Focus on the moon.' })],
      [toolCall('c-3', 'steer_background', { call_id: 'c-1', message: 'Cite your sources.' })],
      [text('I told it twice.')],
      [text('It is reading its second source.')],
      [text('Here is the report.')],
      [text('Nothing new.')],
    ]);
    const history: ModelMessage[] = [];
    const turn = async (say: string) => {
      history.push({ role: 'user', content: say });
      const before = prompts.length;
      const result = await generateText({
        model,
        tools,
        messages: history,
        prepareStep: notifications.prepareStep,
        onStepFinish: notifications.onStepFinish,
        stopWhen: stepCountIs(5),
      });
      history.splice(
        0,
        history.length,
        ...notifications.history([...history, ...responseMessagesOf(result)]),
      );
      return { result, prompts: prompts.slice(before) };
    };

    // Acknowledged at once: it runs in the background, on the worker.
    const started = await turn('Research why tides happen.');
    expect(JSON.stringify(started.result.steps[0]?.toolResults)).toContain('background');
    expect(started.result.text).toBe('I started a researcher.');

    // Steered twice, each message stored before the model is answered.
    const steered = await turn('Tell it to focus on the moon, and to cite its sources.');
    expect(JSON.stringify(steered.result.steps.map((step) => step.toolResults))).toContain('"status":"sent"');
    expect((await client.get('c-2'))?.status).toBe('succeeded');

    // Two turns of the sub-agent, each with an update; the second replaces the first, not yet given.
    go(1);
    go(2);
    await expect.poll(async () => (await client.get('c-1'))?.update?.updateSeq, { timeout: 30_000 }).toBe(2);
    const idle = await turn('How is it going?');
    expect(timesIn(idle.prompts[0], 'Read source 2.')).toBe(1);
    expect(timesIn(idle.prompts[0], 'Read source 1.')).toBe(0);

    // Killed while it waits for its third turn; another worker takes the call up.
    await expect.poll(() => asked().length, { timeout: 30_000 }).toBe(3);
    first.child.kill('SIGKILL');
    await new Promise((resolve) => first.child.once('exit', resolve));
    await startOneWorker();
    go(3);
    await expect.poll(async () => (await client.get('c-1'))?.status, { timeout: 60_000 }).toBe('succeeded');
    await expect
      .poll(async () => (await client.notifications.list({ sessionId: SESSION, status: 'queued' })).length)
      .toBe(1);

    const ended = await turn('Is it done?');
    expect(timesIn(ended.prompts[0], REPORT)).toBe(1);
    const after = await turn('Anything else?');
    // Once in the history, and never given again.
    expect(timesIn(after.prompts[0], REPORT)).toBe(1);
    expect(await client.notifications.list({ sessionId: SESSION, status: 'queued' })).toEqual([]);

    // The first two turns were asked once, by the first worker; the third again after the kill.
    const [turn1, turn2, turn3, again] = asked();
    const firstPid = turn1?.split(' ')[1];
    expect([turn1, turn2, turn3]).toEqual([`1 ${firstPid}`, `2 ${firstPid}`, `3 ${firstPid}`]);
    expect(again).toMatch(/^3 \d+$/);
    expect(again).not.toBe(turn3);
    expect(asked()).toHaveLength(4);
  });
});
