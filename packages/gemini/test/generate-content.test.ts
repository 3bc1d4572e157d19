import { defineTool, ToolError } from '@baton/contracts';
import { createRuntime } from '@baton/runtime';
import { SimulatedClock } from '@baton/runtime/testing';
import { memoryStore } from '@baton/store';
import { filter, firstValueFrom } from 'rxjs';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { functionResponseParts, geminiNotifications, geminiTools } from '../src/index.js';

const opened: Array<{ close(): Promise<void> }> = [];
afterEach(async () => {
  await Promise.all(opened.splice(0).map((runtime) => runtime.close()));
});

describe('Baton in a generateContent loop', () => {
  it('answers function calls with functionResponse parts, and brings a background result into the next turn once', async () => {
    let finish: (value: string) => void = () => {};
    const research = defineTool({
      name: 'research',
      description: 'Researches a topic; takes minutes',
      input: z.object({ topic: z.string() }),
      execution: { mode: 'auto', scheduling: 'when_idle' },
      execute: ({ topic }) =>
        new Promise<string>((resolve) => (finish = (value) => resolve(`${topic}: ${value}`))),
    });
    const lookUp = defineTool({
      name: 'look_up',
      description: 'Looks a word up',
      input: z.object({ word: z.string() }),
      execute: ({ word }) => {
        if (word === 'nothing') throw new ToolError(`No entry for "${word}".`);
        return { word };
      },
    });
    const clock = new SimulatedClock();
    const runtime = createRuntime({
      tools: [research, lookUp],
      store: memoryStore(),
      clock,
      inlineBudgetMs: 300,
    });
    opened.push(runtime);
    expect(geminiTools(runtime)[0]?.functionDeclarations?.map((declaration) => declaration.behavior)).toEqual(
      ['NON_BLOCKING', 'BLOCKING'],
    );

    const started = firstValueFrom(runtime.events$.pipe(filter((event) => event.type === 'started')));
    const parts = functionResponseParts(
      runtime,
      [
        { id: 'call-1', name: 'research', args: { topic: 'tides' } },
        { name: 'look_up', args: { word: 'hello' } },
        { name: 'look_up', args: { word: 'nothing' } },
      ],
      { sessionId: 's1' },
    );
    await started;
    clock.increment(300);
    const [acknowledged, found, missing] = await parts;
    expect(acknowledged?.functionResponse).toMatchObject({ id: 'call-1', name: 'research' });
    expect(JSON.stringify(acknowledged?.functionResponse?.response?.output)).toContain('background');
    expect(found?.functionResponse).toEqual({ name: 'look_up', response: { output: { word: 'hello' } } });
    expect(missing?.functionResponse).toEqual({
      name: 'look_up',
      response: { error: 'No entry for "nothing".' },
    });

    const notifications = geminiNotifications(runtime, { sessionId: 's1' });
    expect(await notifications.parts({ idle: true })).toEqual([]);
    const noticed = firstValueFrom(runtime.events$.pipe(filter((event) => event.type === 'notification')));
    finish('high at noon');
    await noticed;
    // A when_idle result waits for the model to finish its turn, then is given once.
    expect(await notifications.parts({ idle: false })).toEqual([]);
    const [part] = await notifications.parts({ idle: true });
    expect(part?.text).toContain('tides: high at noon');
    // Not acknowledged until the request that was given it answered: a failed request's turn gets it again.
    expect((await notifications.parts({ idle: true }))[0]?.text).toContain('tides: high at noon');
    await notifications.confirm();
    expect(await notifications.parts({ idle: true })).toEqual([]);
  });
});
