import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { createRuntime } from '@baton/runtime';
import { sqliteStore } from '@baton/store-sqlite';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { filter, firstValueFrom } from 'rxjs';
import { afterAll, describe, expect, it } from 'vitest';
import { mcpTools } from '../src/index.js';
import { startRemoteServer } from './remote-server.js';

const dir = mkdtempSync(join(tmpdir(), 'baton-mcp-tools-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('a remote task across a Baton restart', () => {
  it('is followed again by the process that takes up the call, not called again', async () => {
    const remote = await startRemoteServer();
    const path = join(dir, 'calls.db');
    const child = spawn(
      process.execPath,
      [join(import.meta.dirname, 'fixtures', 'dying-baton.mjs'), remote.url.href, path],
      {
        stdio: ['ignore', 'pipe', 'inherit'],
      },
    );
    const exited = new Promise((resolve) => child.on('exit', (_code, signal) => resolve(signal)));
    const lines: string[] = [];
    for await (const line of createInterface({ input: child.stdout })) {
      lines.push(line);
      if (line === 'remote task stored') break;
    }
    expect(JSON.parse(lines[0] ?? '{}')).toMatchObject({ callId: 'remote-1', status: 'backgrounded' });
    child.kill('SIGKILL');
    expect(await exited).toBe('SIGKILL');

    // The next process: the same file, a new connection to the remote server.
    const client = new Client({ name: 'next-baton', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(remote.url));
    const runtime = createRuntime({
      tools: await mcpTools(client, { endpointId: remote.url.href }),
      store: sqliteStore({ path }),
    });
    try {
      const ended = firstValueFrom(
        runtime
          .follow({ callId: 'remote-1' })
          .pipe(filter((event) => event.type === 'succeeded' || event.type === 'failed')),
      );
      await runtime.ready;
      await remote.finish('tides', 'high at noon');
      expect((await ended).type).toBe('succeeded');
      expect(await runtime.get('remote-1')).toMatchObject({
        status: 'succeeded',
        output: 'high at noon',
        attempt: 2,
      });
      // One remote task, made by the first process and followed to its end by the second.
      expect(remote.created).toEqual(['tides']);
    } finally {
      await runtime.close();
      await client.close();
      await remote.close();
    }
  });
});
