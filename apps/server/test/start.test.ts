import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { throwawayPostgres } from '@baton/store-postgres/testing';
import { MAIN as main, startServer } from '@baton/test-support';
import { afterAll, describe, expect, it } from 'vitest';

const dir = mkdtempSync(join(tmpdir(), 'baton-server-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

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

  it('warns at its start of an auto tool whose inline budget is longer than MCP hosts wait, and not of the default', async () => {
    const hostWarnings = async (budget: string | undefined) => {
      const child = spawn(process.execPath, [main], {
        env: {
          ...process.env,
          BATON_PORT: '0',
          BATON_STORE: join(dir, `budget-${budget ?? 'default'}.db`),
          ...(budget === undefined ? {} : { BATON_INLINE_BUDGET_MS: budget }),
        },
        stdio: ['ignore', 'pipe', 'inherit'],
      });
      // Every line it writes, from its start to its exit.
      const lines: string[] = [];
      const started = new Promise<void>((resolve) =>
        createInterface({ input: child.stdout }).on('line', (line) => {
          lines.push(line);
          if (line.includes('"msg":"started"')) resolve();
        }),
      );
      // Closed: it exited, and every line it wrote has been read.
      const closed = new Promise((resolve) => child.on('close', resolve));
      await started;
      child.kill('SIGTERM');
      expect(await closed).toBe(0);
      return lines.filter((line) => line.includes('longer than MCP hosts wait'));
    };
    const [warning, ...more] = await hostWarnings('90000');
    expect(more).toEqual([]);
    expect(JSON.parse(warning ?? '{}')).toMatchObject({
      level: 40,
      msg: expect.stringMatching(
        /^the inline budget of slow_report \(90000 ms\) is longer than MCP hosts wait/,
      ),
    });
    expect(await hostWarnings(undefined)).toEqual([]);
  });

  it('runs on PostgreSQL when BATON_STORE is a postgres:// URL, and hides its password when it says so', async () => {
    const postgres = await throwawayPostgres();
    try {
      const url = postgres.url.replace('postgres://baton@', 'postgres://baton:secret@');
      const server = await startServer({ env: { BATON_STORE: url }, dir });
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

  /** Runs the built server to its exit with these arguments and store; what it printed on stderr. */
  async function exitOf(
    args: string[],
    store: string,
  ): Promise<{ code: unknown; stdout: string; stderr: string }> {
    const child = spawn(process.execPath, [main, ...args], {
      env: { ...process.env, BATON_PORT: '0', BATON_STORE: store },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
    });
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    const code = await new Promise((resolve) => child.on('exit', resolve));
    return { code, stdout, stderr };
  }

  it('refuses a store that is not one, or that was emptied, in one line; --init starts afresh; doctor checks the file', async () => {
    const garbage = join(dir, 'garbage.db');
    writeFileSync(garbage, 'not a database at all\n'.repeat(100));
    const refused = await exitOf([], garbage);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toBe(
      `baton: the SQLite store ${garbage} is not a SQLite database (another kind of file, or damaged): restore it from a backup, or move it away to start afresh\n`,
    );

    const store = join(dir, 'emptied.db');
    const server = await startServer({ env: { BATON_STORE: store } });
    expect(await server.stop()).toBe(0);
    expect((await exitOf(['doctor'], store)).stdout).toBe(
      `${store}: ok (integrity_check found no problem)\n`,
    );
    for (const suffix of ['-wal', '-shm']) rmSync(`${store}${suffix}`, { force: true });
    writeFileSync(store, '');
    // doctor reads a file without changing it: an empty one stays empty.
    const doctorEmpty = await exitOf(['doctor'], store);
    expect([doctorEmpty.code, doctorEmpty.stdout]).toEqual([
      1,
      `${store}: an empty file, not a store; nothing was checked or changed\n`,
    ]);
    expect(statSync(store).size).toBe(0);
    expect((await exitOf(['doctor'], garbage)).stdout).toBe(
      `${garbage}: not a SQLite database; nothing was checked or changed\n`,
    );
    const emptied = await exitOf([], store);
    expect(emptied.code).toBe(1);
    expect(emptied.stderr).toContain('held a Baton store and is now empty (0 bytes)');
    expect(emptied.stderr).toContain('--init');
    const afresh = await startServer({ env: { BATON_STORE: store }, args: ['--init'] });
    expect(await afresh.stop()).toBe(0);
  });

  it('stops at once, in one line without the password, when its PostgreSQL database is gone', async () => {
    const postgres = await throwawayPostgres();
    try {
      const gone = postgres.url
        .replace('postgres://baton@', 'postgres://baton:secret@')
        .replace(/\/postgres$/, '/dropped_db');
      const { code, stderr } = await exitOf([], gone);
      expect(code).toBe(1);
      expect(stderr).toMatch(
        /^baton: the store postgres:\/\/\*\*\*@127\.0\.0\.1:\d+\/dropped_db cannot be used: .*does not exist\n$/,
      );
      expect(stderr).not.toContain('secret');
    } finally {
      await postgres.stop();
    }
  });
});
