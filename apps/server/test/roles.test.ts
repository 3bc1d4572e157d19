/**
 * Roles on the command line: `baton serve --role client` submits its calls to PostgreSQL, and
 * `baton worker` runs them; a worker answers probes and scrapes on its own port. Real processes.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { type AddressInfo, connect, createServer as createNetServer } from 'node:net';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { freshDatabase, type ThrowawayPostgres, throwawayPostgres } from '@baton/store-postgres/testing';
import { CLI, startServer, startWorker } from '@baton/test-support';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

// Inside the repository, so that the tools module finds `@baton/contracts` as a project would.
const outputs = join(import.meta.dirname, '..', 'test-output');
mkdirSync(outputs, { recursive: true });
const dir = mkdtempSync(join(outputs, 'roles-'));
let postgres: ThrowawayPostgres;
beforeAll(async () => {
  postgres = await throwawayPostgres();
}, 60_000);
afterAll(async () => {
  await postgres.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** `where` answers with the process that ran it. */
writeFileSync(
  join(dir, 'tools.mjs'),
  `import { defineTool } from '@baton/contracts';
export const where = defineTool({
  name: 'where', description: 'Says which process ran it',
  input: { type: 'object', properties: {} },
  execute: () => ({ pid: process.pid }),
});
`,
);

/** A new, empty database on the test PostgreSQL. */
const freshDatabaseUrl = () => freshDatabase(postgres.url, 'roles');

/** Runs `baton …` to its end: its exit code and what it printed on stderr. */
function baton(
  args: string[],
  env: Record<string, string>,
): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [CLI, ...args], {
      cwd: dir,
      env: { ...process.env, ...env },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (chunk) => {
      stderr += chunk;
    });
    child.on('exit', (code) => resolve({ code, stderr }));
  });
}

describe('baton serve --role client and baton worker', () => {
  it('runs a call sent to the client, over REST and over MCP, on the worker', async () => {
    const store = await freshDatabaseUrl();
    const worker = await startWorker({
      store,
      module: './tools.mjs',
      cwd: dir,
      args: ['--concurrency', '4'],
    });
    const client = await startServer({
      dir,
      args: ['./tools.mjs', '--role', 'client'],
      env: { BATON_STORE: store },
    });
    try {
      expect(client.banner).toContain('role:       client: its calls run on the workers (baton worker)');
      expect(worker.banner).toContain('concurrency:  4');
      const reply = await fetch(`${client.address}/v1/calls`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'where', args: {}, sessionId: 's' }),
      });
      expect(await reply.json()).toMatchObject({ status: 'succeeded', output: { pid: worker.child.pid } });

      const mcp = new Client({ name: 'roles-test', version: '1.0.0' });
      await mcp.connect(new StreamableHTTPClientTransport(new URL(`${client.address}/mcp`)));
      const result = await mcp.callTool({ name: 'where', arguments: {} });
      expect(result.structuredContent).toEqual({ pid: worker.child.pid });
      await mcp.close();
    } finally {
      expect(await client.stop()).toBe(0);
      expect(await worker.stop()).toBe(0);
    }
  });

  it('answers probes and scrapes on the port of a worker, /metrics to an operator token only', async () => {
    const store = await freshDatabaseUrl();
    const env = { BATON_TOKENS: 'acme:token-of-tenant-acme', BATON_OPERATOR_TOKENS: 'token-of-the-operator' };
    const worker = await startWorker({ store, module: './tools.mjs', cwd: dir, port: true, env });
    const client = await startServer({
      dir,
      args: ['./tools.mjs', '--role', 'client'],
      env: { BATON_STORE: store, ...env },
    });
    try {
      const acme = { authorization: 'Bearer token-of-tenant-acme' };
      const reply = await fetch(`${client.address}/v1/calls`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...acme },
        body: JSON.stringify({ name: 'where', args: {}, sessionId: 's' }),
      });
      expect(((await reply.json()) as { status: string }).status).toBe('succeeded');

      const health = await fetch(`${worker.address}/healthz`);
      expect([health.status, await health.json()]).toEqual([200, { ok: true }]);
      const detailed = await fetch(`${worker.address}/healthz`, {
        headers: { authorization: 'Bearer token-of-the-operator' },
      });
      expect(((await detailed.json()) as { instanceId: string }).instanceId).toBe(worker.instanceId);
      const operator = await fetch(`${worker.address}/metrics`, {
        headers: { authorization: 'Bearer token-of-the-operator' },
      });
      expect(operator.status).toBe(200);
      expect(await operator.text()).toContain('baton_calls_ended_total{status="succeeded",tool="where"} 1');
      expect((await fetch(`${worker.address}/metrics`, { headers: acme })).status).toBe(403);
      expect((await fetch(`${worker.address}/metrics`)).status).toBe(401);
      const calls = await fetch(`${worker.address}/v1/calls`);
      expect([calls.status, (await calls.json()) as unknown]).toEqual([
        404,
        {
          error: {
            code: 'not_found',
            message:
              'no route GET /v1/calls: a worker serves /healthz and /metrics; calls go to a server (baton serve)',
          },
        },
      ]);
    } finally {
      await client.stop();
      await worker.stop();
    }
  });
});

describe('a PostgreSQL store at start', () => {
  it('refuses an emptied schema in one line, and starts afresh there with --init', async () => {
    const store = await freshDatabaseUrl();
    const first = await startServer({ dir, env: { BATON_STORE: store } });
    await first.stop();
    const admin = new pg.Client({ connectionString: store });
    await admin.connect();
    const { rows } = await admin.query<{ tablename: string }>(
      "SELECT tablename FROM pg_tables WHERE schemaname = 'baton'",
    );
    await admin.query(rows.map(({ tablename }) => `DROP TABLE baton.${tablename} CASCADE;`).join('\n'));
    await admin.end();

    const refused = await baton(['serve', '--port', '0'], { BATON_STORE: store });
    const database = new URL(store).pathname.slice(1);
    expect(refused).toEqual({
      code: 1,
      stderr: `baton: the store postgres://***@${new URL(store).host}/${database} cannot be used: the PostgreSQL schema baton of database ${database} exists and holds no Baton store (emptied?): restore it from a backup; to start afresh on purpose, start with --init (BATON_STORE_INIT=1)\n`,
    });
    const worker = await baton(['worker'], { BATON_STORE: store });
    expect(worker.code).toBe(1);
    expect(worker.stderr).toContain('holds no Baton store (emptied?)');

    const afresh = await startServer({ dir, args: ['--init'], env: { BATON_STORE: store } });
    expect((await fetch(`${afresh.address}/healthz`)).status).toBe(200);
    await afresh.stop();
  });

  it('a worker started while PostgreSQL refuses connections waits for it, one warn line a try, and starts once it accepts', async () => {
    const store = new URL(await freshDatabaseUrl());
    const target = { host: store.hostname, port: Number(store.port) };
    // A port nothing listens on yet: PostgreSQL "starts" there once the worker has tried once.
    const port = await new Promise<number>((resolve) => {
      const probe = createNetServer().listen(0, '127.0.0.1', () => {
        const { port: free } = probe.address() as AddressInfo;
        probe.close(() => resolve(free));
      });
    });
    store.hostname = '127.0.0.1';
    store.port = String(port);
    const forwarder = createNetServer((socket) => {
      const upstream = connect(target, () => socket.pipe(upstream).pipe(socket));
      const end = () => {
        socket.destroy();
        upstream.destroy();
      };
      socket.on('error', end);
      upstream.on('error', end);
    });
    const child = spawn(process.execPath, [CLI, 'worker', './tools.mjs'], {
      cwd: dir,
      env: { ...process.env, BATON_STORE: store.href, BATON_DRAIN_MS: '500' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (chunk) => {
      stderr += chunk;
    });
    const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
    const waits: Array<{ level: number; msg: string; attempt: number }> = [];
    try {
      for await (const line of createInterface({ input: child.stdout })) {
        if (line.startsWith('Baton worker')) break;
        const entry = JSON.parse(line);
        if (!String(entry.msg).includes('cannot be reached yet')) continue;
        waits.push(entry);
        if (waits.length === 2)
          await new Promise<void>((resolve) => forwarder.listen(port, '127.0.0.1', resolve));
      }
      child.stdout.resume();
      expect(stderr).toBe('');
      expect(waits.length).toBeGreaterThanOrEqual(2);
      // A warn line, naming the store without its password, why, and when it tries again.
      expect(waits[0]?.level).toBe(40);
      expect(waits[0]?.msg).toMatch(
        new RegExp(
          `^the store postgres://\\*\\*\\*@127\\.0\\.0\\.1:${port}/\\S+ cannot be reached yet \\(.*ECONNREFUSED.*\\): trying again in 250 ms, for up to 60000 ms in all \\(BATON_STORE_WAIT_MS\\)$`,
        ),
      );
      expect(waits.map((wait) => wait.attempt).slice(0, 2)).toEqual([1, 2]);
    } finally {
      child.kill('SIGTERM');
      expect(await exited).toBe(0);
      forwarder.close();
    }
  });
});
