import { describe, expect, it } from 'vitest';
import { PlacedMessages, turnStartIndex } from '../src/bridge/index.js';

type Message = { role: 'user' | 'assistant'; text: string };
const user = (text: string): Message => ({ role: 'user', text });
const said = (text: string): Message => ({ role: 'assistant', text });
const isUser = (message: Message) => message.role === 'user';

describe("placing results in a model's messages", () => {
  it("puts a turn's results before the user's trailing words, or after a history that ends with the model", () => {
    expect(turnStartIndex([user('hi'), said('hello'), user('and?'), user('well?')], isUser)).toBe(2);
    expect(turnStartIndex([user('hi'), said('hello')], isUser)).toBe(2);
    expect(turnStartIndex([user('hi')], isUser)).toBe(1);
  });

  it('gives the results back where they went in, to a framework that hands each step its own messages', () => {
    const placed = new PlacedMessages<Message>();
    const result = user('tides: found');
    const run = [user('hi'), said('hello'), user('and?')];
    placed.place(2, [result]);
    expect(placed.merged(run)).toEqual([user('hi'), said('hello'), result, user('and?')]);
    expect(placed.merged([...run, said('ok')])).toEqual([
      user('hi'),
      said('hello'),
      result,
      user('and?'),
      said('ok'),
    ]);
  });

  it('puts in no result the framework kept in the messages itself, and two results of the same words twice', () => {
    const placed = new PlacedMessages<Message>();
    const first = user('tides: found');
    const second = user('tides: found');
    placed.place(1, [first, second]);
    // A framework that hands the next step what this one was given (the AI SDK 7).
    const kept = [user('hi'), first, second, said('ok')];
    expect(placed.merged(kept)).toEqual(kept);
    expect(placed.merged([user('hi'), said('ok')])).toEqual([user('hi'), first, second, said('ok')]);
  });
});
