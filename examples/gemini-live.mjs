// A voice session that does not go quiet while a tool runs, in Gemini Live:
// `node examples/gemini-live.mjs` (after `npm ci && npm run build`). The SDK's own Live client
// talks to a stand-in for the Live endpoint on this machine, scripted to do what a model would:
// it asks for the tides (a slow tool), chats while the call runs in the background, and says the
// result once it comes back with its scheduling.

import { defineTool } from '@baton/contracts';
import { batonLive } from '@baton/gemini';
import { createRuntime } from '@baton/runtime';
import { GoogleGenAI } from '@google/genai';
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

// The stand-in for Gemini Live: the protocol's messages, a model's part scripted.
const endpoint = new WebSocketServer({ port: 0, host: '127.0.0.1' });
await new Promise((resolve) => endpoint.once('listening', resolve));
const ended = new Promise((resolve) => {
  endpoint.on('connection', (socket) => {
    const send = (message) => socket.send(JSON.stringify(message));
    socket.on('message', (data) => {
      const message = JSON.parse(String(data));
      if (message.setup) {
        send({ setupComplete: {} });
        console.log('user: When is high tide?');
        send({ toolCall: { functionCalls: [{ id: 'call-1', name: 'research', args: { topic: 'tides' } }] } });
      }
      for (const response of [message.toolResponse?.functionResponses ?? []].flat()) {
        if (response.willContinue) {
          console.log(
            `model (hearing "${response.response.output.message.split('.')[0]}"): I am looking it up.`,
          );
          console.log('user: Thanks. And is it windy?');
          console.log('model: A light breeze from the west.');
        } else {
          console.log(`(the result comes back, scheduling ${response.scheduling}: the model says it now)`);
          console.log(`model: The research is back: ${response.response.output.result}.`);
          resolve();
        }
      }
    });
  });
});

const live = batonLive(runtime, { sessionId: 'voice-1' });
const ai = new GoogleGenAI({
  apiKey: 'example',
  httpOptions: { baseUrl: `http://127.0.0.1:${endpoint.address().port}` },
});
const session = await ai.live.connect({
  model: 'gemini-live',
  config: { tools: live.tools },
  callbacks: { onmessage: live.onmessage, onclose: () => live.detach() },
});
await live.attach(session);
await ended;

session.close();
live.close();
await runtime.close();
endpoint.close();
