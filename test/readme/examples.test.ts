import { execFile } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const examples = join(import.meta.dirname, '..', '..', 'examples');
const run = promisify(execFile);

/** What a conversation in which the result came back while the user was idle prints. */
const IDLE_TURN = [
  'user: When is high tide?',
  'assistant: I am looking it up; I will tell you when it is back.',
  '(a result came back while the user was idle: a turn of its own)',
  'assistant: The research is back: high tide at 12:40.',
  '',
].join('\n');

/** Every bridge's example of a result that comes back while the user is idle: `examples/<bridge>-idle-turn.mjs`. */
const IDLE_TURN_EXAMPLES = readdirSync(examples)
  .filter((file) => file.endsWith('-idle-turn.mjs'))
  .map((file) => file.slice(0, -'-idle-turn.mjs'.length));

describe("the examples of the bridges, with each framework's own test double", () => {
  it('has one for each bridge that starts a turn of its own', () => {
    expect(IDLE_TURN_EXAMPLES.length).toBeGreaterThanOrEqual(8);
  });

  it.each(IDLE_TURN_EXAMPLES)(
    '%s: a result that comes back while the user is idle starts a turn of its own',
    async (bridge) => {
      const { stdout } = await run(process.execPath, [join(examples, `${bridge}-idle-turn.mjs`)]);
      expect(stdout).toBe(IDLE_TURN);
    },
  );
});

describe('the example of the Gemini Live bridge, against a local stand-in for the Live endpoint', () => {
  it('acknowledges a slow call so the model keeps talking, and sends its result with its scheduling', async () => {
    const { stdout } = await run(process.execPath, [join(examples, 'gemini-live.mjs')]);
    expect(stdout).toBe(
      [
        'user: When is high tide?',
        'model (hearing "This tool is taking longer than 100 ms, so it is continuing in the background"): I am looking it up.',
        'user: Thanks. And is it windy?',
        'model: A light breeze from the west.',
        '(the result comes back, scheduling INTERRUPT: the model says it now)',
        'model: The research is back: tides: high tide at 12:40.',
        '',
      ].join('\n'),
    );
  });
});

describe('the example of the OpenAI Realtime bridge, against a local stand-in for the Realtime endpoint', () => {
  it('acknowledges a slow call so the model keeps talking, and interrupts it to give the result', async () => {
    const { stdout } = await run(process.execPath, [join(examples, 'openai-realtime.mjs')]);
    expect(stdout).toBe(
      [
        'user: When is high tide?',
        'model (hearing "This tool is taking longer than 100 ms, so it is continuing in the background"): I am looking it up.',
        'user: Thanks. And is it windy?',
        'model: A light breeze from the west, and...',
        '(the result comes back, scheduling interrupt: the model stops to say it)',
        'model: The research is back: high tide at 12:40.',
        '',
      ].join('\n'),
    );
  });
});
