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
  '@baton/a2a',
  '@baton/inspector',
  '@baton/server',
  '@baton/client',
];

const run = (command: string, args: string[], cwd: string) =>
  execFileSync(command, args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });

/** `baton …` from the project's bin, its banners read as they come: each start prints "listening on". */
function baton(args: string[], cwd: string, bin: string) {
  const child = spawn(bin, args, { cwd, stdio: ['ignore', 'pipe', 'inherit'] });
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  const lines: string[] = [];
  const addresses: string[] = [];
  const reading = (async () => {
    for await (const line of createInterface({ input: child.stdout })) {
      lines.push(line);
      const address = /Baton is listening on (\S+)/.exec(line)?.[1];
      if (address) addresses.push(address);
    }
  })();
  return {
    lines,
    /** The address of its `n`th start, once it has started that often. */
    async started(n = 1): Promise<string> {
      while (addresses.length < n) {
        if (child.exitCode !== null)
          throw new Error(`baton exited with ${child.exitCode}:\n${lines.join('\n')}`);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      return addresses[n - 1] as string;
    },
    async stop(): Promise<number | null> {
      child.kill('SIGTERM');
      const code = await exited;
      await reading;
      return code;
    },
  };
}

async function callTool(address: string, name: string, args: object): Promise<unknown> {
  const reply = await fetch(`${address}/v1/calls`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ name, args, sessionId: 's' }),
  });
  return ((await reply.json()) as { output?: unknown }).output;
}

describe('a new user, from the packed packages', () => {
  it('installs them into an empty project, serves a tools.js with the baton command, calls it with the typed client, over MCP and A2A too, stops it cleanly, and serves a CommonJS project and a TypeScript one with --watch', {
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
    const bin = join(project, 'node_modules', '.bin', 'baton');
    const server = baton(['serve', './tools.js', '--port', '0'], project, bin);
    const address = await server.started();
    const lines = server.lines;
    while (!lines.some((line) => line.includes('try:'))) {
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
    // And an A2A agent, its tools the skills of its card.
    const card = (await (await fetch(`${address}/.well-known/agent-card.json`)).json()) as {
      skills: Array<{ id: string }>;
    };
    expect(card.skills.map((skill) => skill.id)).toEqual(['shout']);

    // The typed client, from its package, against the same server.
    writeFileSync(
      join(project, 'client.mjs'),
      [
        "import { createClient } from '@baton/client';",
        'const baton = createClient({ baseUrl: process.argv[2] });',
        "const reply = await baton.call({ name: 'shout', args: { text: 'typed' }, sessionId: 's' });",
        'const events = [];',
        'for await (const event of baton.follow(reply.callId)) events.push(event.type);',
        'console.log(reply.output, events.join(","));',
        '',
      ].join('\n'),
    );
    expect(run(process.execPath, ['client.mjs', address], project).trim()).toBe(
      'TYPED queued,started,succeeded',
    );

    expect(await server.stop()).toBe(0);
    expect(lines.at(-1)).toContain('"msg":"stopped"');

    // A default `npm init` project (CommonJS: require and module.exports), and one in TypeScript,
    // served with --watch: a change to the file restarts the server with the new tool.
    const commonjs = join(project, 'commonjs');
    mkdirSync(commonjs);
    writeFileSync(join(commonjs, 'package.json'), JSON.stringify({ name: 'cjs-tools', version: '1.0.0' }));
    writeFileSync(
      join(commonjs, 'tools.js'),
      [
        "const { defineTool } = require('@baton/contracts');",
        'const whisper = defineTool({',
        "  name: 'whisper',",
        "  description: 'Says it softer',",
        "  input: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },",
        '  execute: ({ text }) => text.toLowerCase(),',
        '});',
        'module.exports = { whisper };',
        '',
      ].join('\n'),
    );
    const required = baton(['serve', './tools.js', '--port', '0', '--store', 'cjs.db'], commonjs, bin);
    expect(await callTool(await required.started(), 'whisper', { text: 'HUSH' })).toBe('hush');
    expect(await required.stop()).toBe(0);

    const typed = join(project, 'typed');
    mkdirSync(typed);
    writeFileSync(join(typed, 'package.json'), JSON.stringify({ name: 'ts-tools', version: '1.0.0' }));
    const source = [
      "import { defineTool } from '@baton/contracts';",
      'interface Text { text: string }',
      'export const repeat = defineTool({',
      "  name: 'repeat',",
      "  description: 'Says it twice',",
      "  input: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },",
      "  execute: ({ text }: Text): string => [text, text].join(' '),",
      '});',
      '',
    ].join('\n');
    writeFileSync(join(typed, 'tools.ts'), source);
    const watched = baton(['serve', './tools.ts', '--watch', '--port', '0', '--store', 'ts.db'], typed, bin);
    expect(await callTool(await watched.started(1), 'repeat', { text: 'echo' })).toBe('echo echo');
    writeFileSync(
      join(typed, 'tools.ts'),
      source.replace("[text, text].join(' ')", "[text, text, text].join(', ')"),
    );
    expect(await callTool(await watched.started(2), 'repeat', { text: 'echo' })).toBe('echo, echo, echo');
    expect(await watched.stop()).toBe(0);
  });
});
