// The process the pull-delivery crash test kills: an AI SDK loop whose model has been given a
// background result (the bridge took it for the step) and never answers; killed there.
import { batonNotifications } from '@baton/ai-sdk';
import { createRuntime } from '@baton/runtime';
import { sqliteStore } from '@baton/store-sqlite';
import { generateText } from 'ai';
import { MockLanguageModelV3 } from 'ai/test';
import { loopTools } from './loop-tools.mjs';

const [path] = process.argv.slice(2);
const runtime = createRuntime({ tools: loopTools(), store: sqliteStore({ path }) });
await runtime.ready;
await runtime.call({ name: 'research', args: { topic: 'tides' }, sessionId: 'chat', callId: 'research-1' });
// Its end is a notification of the session.
while ((await runtime.notifications.list({ sessionId: 'chat', status: 'queued' })).length === 0) {
  await new Promise((resolve) => setTimeout(resolve, 10));
}
const notifications = batonNotifications(runtime, { sessionId: 'chat' });
const model = new MockLanguageModelV3({
  doGenerate: async ({ prompt }) => {
    process.stdout.write(`given ${JSON.stringify(prompt).includes('tides: found')}\n`);
    // The model's step never ends: the process dies in it.
    return new Promise(() => {});
  },
});
await generateText({
  model,
  messages: [{ role: 'user', content: 'Anything new?' }],
  prepareStep: notifications.prepareStep,
  onStepFinish: notifications.onStepFinish,
});
