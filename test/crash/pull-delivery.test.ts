/**
 * A pull bridge's result survives the process that took it: the AI SDK loop's process is killed
 * after the bridge gave the model's step a background result and before the step ran; the next
 * process's loop gives it again, once, and acknowledges it once its step ran.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { batonNotifications } from '@baton/ai-sdk';
import { createRuntime } from '@baton/runtime';
import { sqliteStore } from '@baton/store-sqlite';
import { generateText } from 'ai';
import { MockLanguageModelV3 } from 'ai/test';
import { afterAll, describe, expect, it } from 'vitest';
// A plain ES module, shared with the child process.
import { loopTools } from './loop-tools.mjs';

const dir = mkdtempSync(join(tmpdir(), 'baton-pull-delivery-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("a pull bridge's process killed between the take and the model's step", () => {
  it('gives the result again in the next process, once, and acknowledges it once the step ran', {
    timeout: 60_000,
  }, async () => {
    const path = join(dir, 'loop.db');
    const child = spawn(process.execPath, [join(import.meta.dirname, 'dying-loop.mjs'), path], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const exited = new Promise<NodeJS.Signals | null>((resolve) =>
      child.on('exit', (_code, signal) => resolve(signal)),
    );
    let given: string | undefined;
    for await (const line of createInterface({ input: child.stdout })) {
      given = line;
      break;
    }
    // The first process's model had the result in its step's input, then the process died.
    expect(given).toBe('given true');
    child.kill('SIGKILL');
    expect(await exited).toBe('SIGKILL');

    const runtime = createRuntime({ tools: loopTools(), store: sqliteStore({ path }) });
    try {
      await runtime.ready;
      const [queued] = await runtime.notifications.list({ sessionId: 'chat', status: 'queued' });
      expect(queued).toMatchObject({ callId: 'research-1', status: 'queued' });
      const prompts: string[] = [];
      const model = new MockLanguageModelV3({
        doGenerate: async ({ prompt }) => {
          prompts.push(JSON.stringify(prompt));
          return {
            content: [{ type: 'text', text: 'The research came back: tides: found.' }],
            finishReason: { unified: 'stop', raw: undefined },
            usage: {
              inputTokens: { total: 1, noCache: 1, cacheRead: undefined, cacheWrite: undefined },
              outputTokens: { total: 1, text: 1, reasoning: undefined },
            },
            warnings: [],
          };
        },
      });
      const notifications = batonNotifications(runtime, { sessionId: 'chat' });
      await generateText({
        model,
        messages: [{ role: 'user', content: 'Anything new?' }],
        prepareStep: notifications.prepareStep,
        onStepFinish: notifications.onStepFinish,
      });
      expect(prompts).toHaveLength(1);
      expect(prompts[0]?.split('tides: found').length).toBe(2);
      expect(await runtime.notifications.list({ sessionId: 'chat', status: 'queued' })).toEqual([]);
    } finally {
      await runtime.close();
    }
  });
});
