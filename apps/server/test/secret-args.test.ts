import { skillMessage } from '@baton/a2a';
import { defineTool } from '@baton/contracts';
import { createRuntime } from '@baton/runtime';
import { memoryStore } from '@baton/runtime/testing';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createServer } from '../src/server.js';
import { a2aClientOf, sendTo } from './a2a-client.js';

const SECRET = 'sk-live-SECRET-0001';
const TOKEN = 'token-of-acme-SECRET-0002';
const authorization = `Bearer ${TOKEN}`;

const deploy = defineTool({
  name: 'deploy',
  description: 'Deploys a service with the caller’s key; a person approves first',
  input: z.object({ service: z.string(), apiKey: z.string().meta({ writeOnly: true }) }),
  execution: { needsApproval: true },
  execute: ({ service, apiKey }) => `deployed ${service} with a key of ${apiKey.length} characters`,
});

const closing: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const close of closing.splice(0).reverse()) await close();
});

describe('an argument its tool marks secret (writeOnly) never leaves the server as given', () => {
  it('is redacted in the records the API and the inspector read, and absent (with the bearer token) from every log line and stored event', async () => {
    const lines: string[] = [];
    const logger = pino({ level: 'trace' }, { write: (line: string) => lines.push(line) });
    const store = memoryStore();
    const runtime = createRuntime({ tools: [deploy], store, logger });
    await runtime.ready;
    const app = createServer({ runtime, logger, tokens: { [TOKEN]: 'acme' } });
    closing.push(
      () => runtime.close(),
      () => app.close(),
    );
    const created = await app.inject({
      method: 'POST',
      url: '/v1/calls',
      headers: { authorization },
      payload: { name: 'deploy', args: { service: 'web', apiKey: SECRET }, sessionId: 's', callId: 'c1' },
    });
    expect(created.json()).toMatchObject({ status: 'backgrounded' });
    // What an approver (and the inspector's call page) reads of the waiting call.
    const waiting = await app.inject({ url: '/v1/calls/c1', headers: { authorization } });
    expect(waiting.json()).toMatchObject({
      approval: 'pending',
      args: { service: 'web', apiKey: '[redacted]' },
    });
    expect(
      (
        await app.inject({
          method: 'POST',
          url: '/v1/calls/c1/approve',
          headers: { authorization },
          payload: {},
        })
      ).json(),
    ).toEqual({
      approved: true,
    });
    const ended = await runtime.wait('acme/c1');
    // The tool itself ran with the key.
    expect(ended?.output).toBe(`deployed web with a key of ${SECRET.length} characters`);

    const reads = await Promise.all(
      ['/v1/calls/c1', '/v1/calls', '/v1/calls?callId=c1', '/v1/calls/c1/events', '/v1/notifications'].map(
        async (url) => (await app.inject({ url, headers: { authorization } })).body,
      ),
    );
    expect(reads[0]).toContain('[redacted]');
    for (const read of reads) expect(read).not.toContain(SECRET);
    expect(JSON.stringify(await runtime.replay('acme/c1'))).not.toContain(SECRET);
    expect(lines.length).toBeGreaterThan(3);
    // Who approved is logged: the approvals' audit.
    expect(lines.map((line) => JSON.parse(line))).toContainEqual(
      expect.objectContaining({ msg: 'approval decided', callId: 'acme/c1', by: 'acme', approved: true }),
    );
    for (const line of lines) {
      expect(line).not.toContain(SECRET);
      expect(line).not.toContain(TOKEN);
    }
    // The store keeps it: a call recovered after a crash runs with its arguments.
    expect((await store.getCall('acme/c1'))?.args).toEqual({ service: 'web', apiKey: SECRET });
  });

  it('is redacted in the A2A task history: the answer to SendMessage, GetTask and ListTasks', async () => {
    const keep = defineTool({
      name: 'keep_key',
      description: 'Keeps a key for a service',
      input: z.object({ service: z.string(), apiKey: z.string().meta({ writeOnly: true }) }),
      execute: ({ service }) => `kept the key of ${service}`,
    });
    const runtime = createRuntime({ tools: [keep] });
    await runtime.ready;
    const app = createServer({ runtime, tokens: { [TOKEN]: 'acme' } });
    await app.listen({ host: '127.0.0.1', port: 0 });
    closing.push(
      () => runtime.close(),
      () => app.close(),
    );
    const { port } = app.server.address() as { port: number };
    const client = await a2aClientOf(`http://127.0.0.1:${port}`, TOKEN);
    const task = await sendTo(client, skillMessage('keep_key', { service: 'web', apiKey: SECRET }));
    expect(JSON.stringify(task)).toContain('[redacted]');
    const read = [
      task,
      await client.getTask({ tenant: '', id: task.id, historyLength: 10 }),
      await client.listTasks({
        tenant: '',
        contextId: '',
        status: 0,
        pageSize: 10,
        pageToken: '',
        historyLength: 10,
        statusTimestampAfter: undefined,
        includeArtifacts: true,
      }),
    ];
    for (const each of read) expect(JSON.stringify(each)).not.toContain(SECRET);
    // The tool had it.
    expect((await runtime.list({})).calls[0]?.output).toBe('kept the key of web');
  });
});
