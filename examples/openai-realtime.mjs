// A voice agent that does not go quiet while a tool runs, on OpenAI Realtime:
// `node examples/openai-realtime.mjs` (after `npm ci && npm run build`). The SDK's own WebSocket
// transport talks to a stand-in for the Realtime endpoint on this machine, scripted to do what a
// model would: it asks for the tides (a slow tool), chats while the call runs in the background,
// and is interrupted to say the result when it comes back.
import { defineTool } from '@baton/contracts';
import { batonRealtimeResults, batonRealtimeTools } from '@baton/openai-realtime';
import { createRuntime } from '@baton/runtime';
import { OpenAIRealtimeWebSocket, RealtimeAgent, RealtimeSession } from '@openai/agents-realtime';
import { WebSocketServer } from 'ws';
import { z } from 'zod';

const research = defineTool({
  name: 'research',
  description: 'Looks up the tides; takes a while',
  input: z.object({ topic: z.string() }),
  execution: { mode: 'auto', scheduling: 'interrupt' },
  async execute({ topic }) {
    await new Promise((resolve) => setTimeout(resolve, 500));
    return `${topic}: high tide at 12:40`;
  },
});
const runtime = createRuntime({ tools: [research], inlineBudgetMs: 100 });
const sessionId = 'voice-1';

// The stand-in for the Realtime endpoint: the protocol's events, a model's part scripted.
const endpoint = new WebSocketServer({ port: 0, host: '127.0.0.1' });
await new Promise((resolve) => endpoint.once('listening', resolve));
const ended = new Promise((resolve) => {
  endpoint.on('connection', (socket) => {
    const send = (event) => socket.send(JSON.stringify({ event_id: `evt_${Math.random()}`, ...event }));
    const response = (id, status) => ({ id, object: 'realtime.response', status, output: [] });
    let responses = 0;
    let speaking;
    send({ type: 'session.created', session: { id: 'sess', object: 'realtime.session' } });
    let asked = false;
    /** The user's question, once the session has said what it is (its tools): the model calls one. */
    const ask = () => {
      console.log('user: When is high tide?');
      send({ type: 'response.created', response: response('resp_0', 'in_progress') });
      send({
        type: 'response.output_item.done',
        response_id: 'resp_0',
        output_index: 0,
        item: {
          id: 'item_0',
          type: 'function_call',
          status: 'completed',
          call_id: 'call_1',
          name: 'research',
          arguments: '{"topic":"tides"}',
        },
      });
      send({ type: 'response.done', response: response('resp_0', 'completed') });
    };
    socket.on('message', (data) => {
      const event = JSON.parse(String(data));
      const item = event.item ?? {};
      if (event.type === 'session.update' && !asked) {
        asked = true;
        ask();
      }
      if (item.type === 'function_call_output') {
        console.log(
          `model (hearing "${JSON.parse(item.output).message.split('.')[0]}"): I am looking it up.`,
        );
        console.log('user: Thanks. And is it windy?');
        console.log('model: A light breeze from the west, and...');
      }
      if (item.type === 'message') {
        const text = item.content.map((part) => part.text).join('');
        console.log(`model: The research is back: ${/tides: ([^"\n]+)/.exec(text)?.[1]}.`);
        resolve();
      }
      if (event.type === 'response.cancel' && speaking) {
        console.log('(the result comes back, scheduling interrupt: the model stops to say it)');
        send({ type: 'response.done', response: response(speaking, 'cancelled') });
        speaking = undefined;
      }
      if (event.type === 'response.create') {
        // The model answers the acknowledgement, and is still talking when the result comes.
        speaking = `resp_${++responses}`;
        send({ type: 'response.created', response: response(speaking, 'in_progress') });
      }
    });
  });
});

const agent = new RealtimeAgent({
  name: 'voice',
  instructions: 'Answer by voice.',
  tools: batonRealtimeTools(runtime, { sessionId }),
});
const session = new RealtimeSession(agent, {
  transport: new OpenAIRealtimeWebSocket({ url: `ws://127.0.0.1:${endpoint.address().port}` }),
  model: 'gpt-realtime',
});
const results = batonRealtimeResults(runtime, { sessionId });
await session.connect({ apiKey: 'example' });
await results.attach(session);
await ended;

await results.close();
session.close();
await runtime.close();
endpoint.close();
