import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { throwawayPostgres } from '@baton/store-postgres/testing';
import { afterAll, describe, expect, it } from 'vitest';
import { startServer } from './server-process.js';

const dir = mkdtempSync(join(tmpdir(), 'baton-server-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const main = join(import.meta.dirname, '..', 'dist', 'main.js');

describe('the built server, as `npm start` runs it', () => {
  it('starts on the SQLite store, says where it listens, and answers /healthz', async () => {
    const child = spawn(process.execPath, [main], {
      env: { ...process.env, BATON_PORT: '0', BATON_STORE: join(dir, 'baton.db') },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let address = '';
    for await (const line of createInterface({ input: child.stdout })) {
      const match = /listening on (\S+)/.exec(line);
      if (match?.[1]) {
        address = match[1];
        break;
      }
    }
    const health = await fetch(`${address}/healthz`);
    expect(health.status).toBe(200);
    expect(await health.json()).toMatchObject({ ok: true, stats: { active: 0 } });
    const call = await fetch(`${address}/v1/calls`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'echo', args: { text: 'over http' }, sessionId: 's' }),
    });
    expect(await call.json()).toMatchObject({ status: 'succeeded', output: { text: 'over http' } });
    const exited = new Promise((resolve) => child.on('exit', resolve));
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
  });

  it('runs on PostgreSQL when BATON_STORE is a postgres:// URL, and hides its password when it says so', async () => {
    const postgres = await throwawayPostgres();
    try {
      const url = postgres.url.replace('postgres://baton@', 'postgres://baton:secret@');
      const server = await startServer({ BATON_STORE: url }, dir);
      const call = await fetch(`${server.address}/v1/calls`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'echo', args: { text: 'on postgres' }, sessionId: 's', callId: 'pg-1' }),
      });
      expect(await call.json()).toMatchObject({ status: 'succeeded', output: { text: 'on postgres' } });
      expect(server.banner).toContain('store:      postgres://***@127.0.0.1');
      expect(server.banner).not.toContain('secret');
      expect(await server.stop()).toBe(0);
    } finally {
      await postgres.stop();
    }
  });

  it('stops at once on a bad configuration, naming the field', async () => {
    const child = spawn(process.execPath, [main], {
      env: { ...process.env, BATON_PORT: 'eighty' },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    const code = await new Promise((resolve) => child.on('exit', resolve));
    expect(code).toBe(1);
    expect(stderr).toMatch(/^bad configuration: BATON_PORT: /);
  });
});
