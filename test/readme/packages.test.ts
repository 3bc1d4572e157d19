import { execFileSync, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { afterAll, describe, expect, it } from 'vitest';

const root = join(import.meta.dirname, '..', '..');
const dir = mkdtempSync(join(tmpdir(), 'baton-new-user-'));
// A clone's node_modules takes a while to remove on a busy machine.
afterAll(() => rm(dir, { recursive: true, force: true }), 300_000);

/** The packages a user installs, as `npm pack` makes them from the built workspaces. */
const PUBLISHED = [
  '@baton/contracts',
  '@baton/machine',
  '@baton/bus',
  '@baton/store',
  '@baton/runtime',
  '@baton/store-sqlite',
  '@baton/store-postgres',
  '@baton/mcp',
  '@baton/inspector',
  '@baton/server',
];

const run = (command: string, args: string[], cwd: string) =>
  execFileSync(command, args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });

describe('a new user, from the packed packages', () => {
  it('installs them into an empty project, serves a tools.js with the baton command, and stops it cleanly', {
    timeout: 600_000,
  }, async () => {
    const packs = join(dir, 'packs');
    mkdirSync(packs);
    run(
      'npm',
      [
        'pack',
        '--silent',
        '--pack-destination',
        packs,
        ...PUBLISHED.flatMap((name) => ['--workspace', name]),
      ],
      root,
    );
    const tarballs = readdirSync(packs).map((file) => join(packs, file));
    expect(tarballs).toHaveLength(PUBLISHED.length);

    const project = join(dir, 'project');
    mkdirSync(project);
    writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'my-agent-tools', type: 'module' }));
    // Native modules (better-sqlite3) are built against the headers of the Node that runs the test.
    const nodedir = dirname(dirname(process.execPath));
    run(
      'npm',
      ['install', '--no-audit', '--no-fund', '--silent', `--nodedir=${nodedir}`, ...tarballs],
      project,
    );
    // The packages load from CommonJS too (require of an ES module, Node 20.19 and later).
    expect(
      run(
        process.execPath,
        ['-e', "console.log(typeof require('@baton/contracts').defineTool)"],
        project,
      ).trim(),
    ).toBe('function');

    writeFileSync(
      join(project, 'tools.js'),
      [
        "import { defineTool } from '@baton/contracts';",
        'export const shout = defineTool({',
        "  name: 'shout',",
        "  description: 'Says it louder',",
        "  input: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },",
        '  execute: ({ text }) => text.toUpperCase(),',
        '});',
        '',
      ].join('\n'),
    );
    // What `npx baton` runs: the package's bin, linked into the project (npx itself does not pass
    // SIGTERM on as the server's own exit).
    const child = spawn(
      join(project, 'node_modules', '.bin', 'baton'),
      ['serve', './tools.js', '--port', '0'],
      {
        cwd: project,
        stdio: ['ignore', 'pipe', 'inherit'],
      },
    );
    const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
    const lines: string[] = [];
    let address = '';
    const reading = (async () => {
      for await (const line of createInterface({ input: child.stdout })) {
        lines.push(line);
        address ||= /Baton is listening on (\S+)/.exec(line)?.[1] ?? '';
      }
    })();
    while (!lines.some((line) => line.includes('try:'))) {
      if (child.exitCode !== null)
        throw new Error(`baton exited with ${child.exitCode}:\n${lines.join('\n')}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const call = await fetch(`${address}/v1/calls`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'shout', args: { text: 'hello' }, sessionId: 's', callId: 'c1' }),
    });
    expect(await call.json()).toMatchObject({ status: 'succeeded', output: 'HELLO' });
    // The inspector is served from its own package, and reads the call through the API.
    expect((await fetch(`${address}/inspector/`)).status).toBe(200);
    expect(await (await fetch(`${address}/v1/calls/c1`)).json()).toMatchObject({ toolName: 'shout' });
    const mcp = await fetch(`${address}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: {
          protocolVersion: '2025-11-25',
          capabilities: {},
          clientInfo: { name: 'new-user', version: '1' },
        },
      }),
    });
    expect(mcp.status).toBe(200);
    expect(await mcp.text()).toContain('"serverInfo"');

    child.kill('SIGTERM');
    expect(await exited).toBe(0);
    await reading;
    expect(lines.at(-1)).toContain('"msg":"stopped"');
  });
});
