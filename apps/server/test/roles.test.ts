/**
 * Roles on the command line: `baton serve --role client` submits its calls to PostgreSQL, and
 * `baton worker` runs them; a worker answers probes and scrapes on its own port. Real processes.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
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
});
