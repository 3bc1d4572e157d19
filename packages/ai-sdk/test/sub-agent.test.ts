import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createRuntime, type Runtime } from '@baton/runtime';
import { deferred, memoryStore, SimulatedClock } from '@baton/runtime/testing';
import { bridgeConformanceOptions, recoveredAndNotified } from '@baton/test-support';
import { tool as aiTool } from 'ai';
import { MockLanguageModelV3 } from 'ai/test';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { subAgentTool } from '../src/index.js';

type Prompt = Parameters<MockLanguageModelV3['doGenerate']>[0]['prompt'];
type Content = Awaited<ReturnType<MockLanguageModelV3['doGenerate']>>['content'];
type Generated = Awaited<ReturnType<MockLanguageModelV3['doGenerate']>>;

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
const answer = (content: Content): Generated => ({
  content,
  finishReason: {
    unified: content.some((part) => part.type === 'tool-call') ? 'tool-calls' : 'stop',
    raw: undefined,
  },
  usage,
  warnings: [],
});

/** A model that answers each turn with what `turn` gives (a promise may hold it); it keeps every prompt. */
function scriptedModel(turn: (index: number) => Content | Promise<Content>) {
  const prompts: Prompt[] = [];
  const model = new MockLanguageModelV3({
    doGenerate: async ({ prompt }) => {
      prompts.push(prompt);
      return answer(await turn(prompts.length));
    },
  });
  return { model, prompts };
}

const search = aiTool({
  description: 'Searches the archive',
  inputSchema: z.object({ query: z.string() }),
  execute: async ({ query }) => `3 papers on ${query}`,
});

function researcher(model: MockLanguageModelV3) {
  return subAgentTool({
    name: 'researcher',
    description: 'Researches a question with its own tools, in the background',
    input: z.object({ question: z.string() }),
    prompt: ({ question }) => `Research: ${question}`,
    model,
    tools: { search },
  });
}

const opened: Runtime[] = [];
const dirs: string[] = [];
afterEach(async () => {
  await Promise.all(opened.splice(0).map((runtime) => runtime.close()));
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function runtimeOf(model: MockLanguageModelV3, store = memoryStore(), clock = new SimulatedClock()) {
  const runtime = createRuntime({ tools: [researcher(model)], store, clock, builtins: ['steer_background'] });
  opened.push(runtime);
  return { runtime, clock };
}

describe('subAgentTool: an AI SDK agent loop as a Baton tool in the background', () => {
  it('runs turns until one calls no tool; logs each as its transcript, and a turn that calls tools is an update', async () => {
    const { model, prompts } = scriptedModel((index) =>
      index === 1
        ? [text('Looking in the archive.'), toolCall('t1', 'search', { query: 'tides' })]
        : [text('Tides follow the moon.')],
    );
    const { runtime } = runtimeOf(model);
    const { callId, status } = await runtime.call({
      name: 'researcher',
      args: { question: 'tides?' },
      sessionId: 's',
    });
    expect(status).toBe('backgrounded');
    expect(await runtime.wait(callId, { timeoutMs: 10_000 })).toMatchObject({
      status: 'succeeded',
      output: 'Tides follow the moon.',
    });
    expect(prompts).toHaveLength(2);
    // The second turn was given the first's tool call and its result.
    expect(JSON.stringify(prompts[1])).toContain('3 papers on tides');
    const record = await runtime.get(callId);
    expect(record?.outputTail).toContain('turn 1');
    expect(record?.outputTail).toContain('calls search({"query":"tides"})');
    expect(record?.outputTail).toContain('assistant: Tides follow the moon.');
    expect(record?.update?.value).toBe('Looking in the archive.');
  });

  it('takes a steering message into its conversation before its next turn', async () => {
    const held = deferred<void>();
    const { model, prompts } = scriptedModel(async (index) => {
      if (index === 1) {
        await held.promise;
        return [toolCall('t1', 'search', { query: 'tides' })];
      }
      return [text('Tides on Mars are solar.')];
    });
    const { runtime } = runtimeOf(model);
    const { callId } = await runtime.call({
      name: 'researcher',
      args: { question: 'tides?' },
      sessionId: 's',
    });
    await runtime.steer(callId, 'Look at Mars instead.');
    held.resolve();
    expect(await runtime.wait(callId, { timeoutMs: 10_000 })).toMatchObject({
      output: 'Tides on Mars are solar.',
    });
    expect(JSON.stringify(prompts[0])).not.toContain('Mars');
    expect(JSON.stringify(prompts[1])).toContain('Look at Mars instead.');
  });

  it('stops the turn under way when the call is cancelled', async () => {
    const { model } = scriptedModel(() => new Promise<Content>(() => {}));
    const { runtime } = runtimeOf(model);
    const { callId } = await runtime.call({
      name: 'researcher',
      args: { question: 'tides?' },
      sessionId: 's',
    });
    expect(await runtime.cancel(callId)).toBe(true);
    expect((await runtime.get(callId))?.status).toBe('cancelled');
  });

  it('goes on after a restart from its last finished turn, and never asks the model again for one it answered', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'baton-sub-agent-'));
    dirs.push(dir);
    const path = join(dir, 'baton.db');
    const first = scriptedModel((index) =>
      index === 1 ? [toolCall('t1', 'search', { query: 'tides' })] : new Promise<Content>(() => {}),
    );
    const before = runtimeOf(first.model, bridgeConformanceOptions.sqliteStore(path));
    const { callId } = await before.runtime.call({
      name: 'researcher',
      args: { question: 'tides?' },
      sessionId: 's',
    });
    await expect.poll(() => first.prompts.length).toBe(2);
    await before.runtime.close();

    const second = scriptedModel(() => [text('Tides follow the moon.')]);
    const after = runtimeOf(second.model, bridgeConformanceOptions.sqliteStore(path));
    await recoveredAndNotified(after, 's');
    expect(await after.runtime.get(callId)).toMatchObject({
      status: 'succeeded',
      result: 'Tides follow the moon.',
    });
    // Turn 1 came from the store: the second model was asked turn 2 only, with turn 1 in it.
    expect(second.prompts).toHaveLength(1);
    expect(JSON.stringify(second.prompts[0])).toContain('3 papers on tides');
  });
});
