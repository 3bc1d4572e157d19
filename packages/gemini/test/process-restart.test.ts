import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { afterAll, describe, expect, it } from 'vitest';
import { fakeLiveServer } from './fake-live-server.js';

const dir = mkdtempSync(join(tmpdir(), 'baton-gemini-process-'));
const children: ChildProcess[] = [];
afterAll(() => {
  for (const child of children) if (child.exitCode === null) child.kill('SIGKILL');
  rmSync(dir, { recursive: true, force: true });
});

/** The fixture process, started; resolves once its conversation is attached ("ready"). */
async function voiceProcess(env: Record<string, string>): Promise<ChildProcess> {
  const child = spawn(process.execPath, [join(import.meta.dirname, 'fixtures', 'voice-process.mjs')], {
    env: { ...process.env, BATON_DB: join(dir, 'baton.db'), ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  children.push(child);
  for await (const line of createInterface({ input: child.stdout ?? process.stdin })) {
    if (line === 'ready') return child;
  }
  throw new Error(`the voice process exited with ${child.exitCode} before it was ready`);
}

describe('a Gemini Live conversation across a restart of the Baton process (SQLite)', () => {
  it('acknowledges a call in one process, and the next process sends its result into the resumed session, once', async () => {
    const server = await fakeLiveServer();
    try {
      const first = await voiceProcess({ LIVE_URL: server.url, RESEARCH: 'hangs' });
      server.send({ sessionResumptionUpdate: { newHandle: 'resume-7', resumable: true } });
      server.send({
        toolCall: { functionCalls: [{ id: 'fc-1', name: 'research', args: { topic: 'orbits' } }] },
      });
      const [acknowledgement] = await server.until(() => {
        const sent = server.responses().filter((response) => response.id === 'fc-1');
        return sent.length === 1 ? sent : undefined;
      });
      expect(acknowledgement).toMatchObject({ willContinue: true });

      // A deploy: the process is stopped while the call runs.
      const exited = new Promise((resolve) => first.once('exit', resolve));
      first.kill('SIGTERM');
      expect(await exited).toBe(0);

      const second = await voiceProcess({ LIVE_URL: server.url, HANDLE: 'resume-7' });
      expect(server.setupOf(2)?.sessionResumption).toEqual({ handle: 'resume-7' });
      const sent = await server.until(() => {
        const all = server.responses().filter((response) => response.id === 'fc-1');
        return all.length === 2 ? all : undefined;
      });
      expect(sent[1]).toMatchObject({ name: 'research', scheduling: 'INTERRUPT' });
      expect(JSON.stringify(sent[1]?.response)).toContain('orbits: elliptical');
      expect(server.connections[1]?.received.some((message) => message.toolResponse)).toBe(true);
      const stopped = new Promise((resolve) => second.once('exit', resolve));
      second.kill('SIGTERM');
      expect(await stopped).toBe(0);
      expect(server.responses().filter((response) => response.id === 'fc-1')).toHaveLength(2);
    } finally {
      await server.close();
    }
  }, 60_000);
});
