import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { type AddressInfo, createServer as createNetServer } from 'node:net';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, describe, expect, it } from 'vitest';

const CLI = join(import.meta.dirname, '..', 'dist', 'cli.js');
// Inside the repository, so that a user's module finds `@baton/contracts` as it would in a project.
const outputs = join(import.meta.dirname, '..', 'test-output');
mkdirSync(outputs, { recursive: true });
const dir = mkdtempSync(join(outputs, 'command-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Runs `baton …` to its end: its exit code and what it printed. */
function baton(args: string[], cwd = dir): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [CLI, ...args], { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => {
      stdout += chunk;
    });
    child.stderr.on('data', (chunk) => {
      stderr += chunk;
    });
    child.on('exit', (code) => resolve({ code, stdout, stderr }));
  });
}

describe('the baton command', () => {
  it('prints its version with --version, the one of its package', async () => {
    const { version } = JSON.parse(readFileSync(join(import.meta.dirname, '..', 'package.json'), 'utf8'));
    const printed = await baton(['--version']);
    expect(printed).toMatchObject({ code: 0, stdout: `${version}\n` });
  });

  it('prints its options with --help, and starts nothing', async () => {
    const help = await baton(['--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('baton serve [module] [options]');
    expect(help.stdout).toContain('--port <n>');
    expect(help.stdout).not.toContain('listening');
    const bare = await baton([]);
    expect(bare.code).toBe(2);
    expect(bare.stdout).toContain('Usage:');
  });

  it('says in one line what is wrong with a module, a command or a flag', async () => {
    writeFileSync(join(dir, 'empty.mjs'), 'export const answer = 42;\n');
    const empty = await baton(['serve', './empty.mjs', '--port', '0']);
    expect(empty.code).toBe(1);
    expect(empty.stderr).toMatch(/^\.\/empty\.mjs exports no tools: export tools made with defineTool\(\)/);
    const missing = await baton(['serve', './missing.mjs']);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toBe(
      `cannot load ./missing.mjs: there is no such file (${join(dir, 'missing.mjs')}); give the path of your tools module\n`,
    );
    expect((await baton(['frobnicate'])).stderr).toMatch(/^unknown command frobnicate/);
    expect((await baton(['serve', '--port', 'eighty'])).stderr).toBe(
      'bad configuration: --port "eighty": Invalid input: expected a number\n',
    );
    expect((await baton(['serve', '--colour'])).stderr).toBe(
      'unknown option --colour (baton --help lists the options)\n',
    );
    const secret = `whsec_${Buffer.alloc(32, 7).toString('base64')}`;
    const privateHook = await baton([
      'serve',
      '--port',
      '0',
      '--webhook-url',
      'http://10.0.0.9/hook',
      '--webhook-secret',
      secret,
    ]);
    expect([privateHook.code, privateHook.stderr]).toEqual([
      1,
      'bad configuration: webhook: the webhook destination 10.0.0.9 is a private, link-local or reserved address: refused unless --webhook-allow-private (BATON_WEBHOOK_ALLOW_PRIVATE=true, webhook.allowPrivate) allows it\n',
    ]);
    const noSecret = await baton([
      'serve',
      '--port',
      '0',
      '--webhook-url',
      'https://hooks.example.com/baton',
    ]);
    expect(noSecret.stderr).toMatch(/^bad configuration: a webhook needs both its URL \(--webhook-url/);
  });

  it('explains a mistake in one line: a flag mistyped or without its value, a port in use, a store path under a file, a module that does not load, a store doctor cannot find', async () => {
    expect((await baton(['serve', '--prot', '9000'])).stderr).toBe(
      'unknown option --prot: did you mean --port? (baton --help lists the options)\n',
    );
    expect((await baton(['serve', '--port'])).stderr).toBe(
      '--port needs a value: --port <value> (baton --help lists the options)\n',
    );
    const taken = createNetServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    const { port } = taken.address() as AddressInfo;
    try {
      expect(await baton(['serve', '--port', String(port), '--store', 'in-use.db'])).toMatchObject({
        code: 78,
        stderr: `port ${port} on 127.0.0.1 is in use (another server?): choose another with --port (BATON_PORT), or 0 for any free port\n`,
      });
    } finally {
      taken.close();
    }
    writeFileSync(join(dir, 'a-file'), '');
    expect((await baton(['serve', '--store', 'a-file/baton.db'])).stderr).toBe(
      'bad configuration: store a-file/baton.db: a file is in the way of its directory: choose another with --store (BATON_STORE)\n',
    );
    writeFileSync(
      join(dir, 'typo.mjs'),
      "import { defineTool } from '@baton/contracts';\nexport const x = ;\n",
    );
    expect((await baton(['serve', './typo.mjs'])).stderr).toBe(
      "cannot load ./typo.mjs: SyntaxError: Unexpected token ';' (./typo.mjs:2)\n",
    );
    writeFileSync(join(dir, 'throws.mjs'), "\n\nthrow new Error('no API key');\n");
    expect((await baton(['serve', './throws.mjs'])).stderr).toBe(
      'cannot load ./throws.mjs: no API key (./throws.mjs:3:7)\n',
    );
    const doctor = await baton(['doctor', '--store', 'never-made.db']);
    expect(doctor).toMatchObject({
      code: 1,
      stdout:
        'never-made.db: no store there, so nothing to check (and nothing was made; baton serve makes one at its first start)\n',
    });
    expect(existsSync(join(dir, 'never-made.db'))).toBe(false);
  });

  it('says in one line that a role other than both needs PostgreSQL, and which roles there are', async () => {
    const sqlite = 'the store ./.baton/baton.db is SQLite, where one process runs every call (role both)\n';
    expect(await baton(['serve', '--role', 'client'])).toMatchObject({
      code: 1,
      stderr: `bad configuration: baton serve --role client needs a PostgreSQL store (BATON_STORE=postgres://…), which its processes share; ${sqlite}`,
    });
    expect(await baton(['worker', '--concurrency', '4'])).toMatchObject({
      code: 1,
      stderr: `bad configuration: baton worker needs a PostgreSQL store (BATON_STORE=postgres://…), which its processes share; ${sqlite}`,
    });
    expect((await baton(['serve', '--role', 'worker'])).stderr).toMatch(
      /^bad configuration: --role "worker": Invalid option: expected one of "both"\|"client"/,
    );
    expect((await baton(['worker', '--port', 'ninety'])).stderr).toBe(
      'bad configuration: worker port ninety: a whole number from 0 to 65535\n',
    );
    expect((await baton(['worker', '--concurrency', '0'])).stderr).toMatch(
      /^bad configuration: --concurrency "0": /,
    );
  });

  it('serves the tools of your module over REST and MCP, logs each request, and stops cleanly on SIGTERM', async () => {
    writeFileSync(
      join(dir, 'tools.mjs'),
      [
        "import { defineTool } from '@baton/contracts';",
        'export const greet = defineTool({',
        "  name: 'greet',",
        "  description: 'Greets someone',",
        "  input: { type: 'object', properties: { who: { type: 'string' } }, required: ['who'] },",
        "  execute: ({ who }) => 'hello, ' + who,",
        '});',
        '',
      ].join('\n'),
    );
    const child = spawn(
      process.execPath,
      [CLI, 'serve', './tools.mjs', '--port', '0', '--store', 'baton.db'],
      {
        cwd: dir,
        stdio: ['ignore', 'pipe', 'inherit'],
      },
    );
    const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
    const lines: string[] = [];
    let address = '';
    const reading = (async () => {
      for await (const line of createInterface({ input: child.stdout })) {
        lines.push(line);
        address ||= /listening on (\S+)/.exec(line)?.[1] ?? '';
      }
    })();
    while (!lines.some((line) => line.includes('try:'))) {
      if (child.exitCode !== null)
        throw new Error(`baton exited with ${child.exitCode}: ${lines.join('\n')}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    // Last, the tools it serves and a sample call that works as printed.
    expect(lines.find((line) => line.includes('tools:'))).toContain('greet');

    const call = await fetch(`${address}/v1/calls`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'greet', args: { who: 'REST' }, sessionId: 's', callId: 'c1' }),
    });
    expect(await call.json()).toMatchObject({ status: 'succeeded', output: 'hello, REST' });
    // What the inspector reads of a call.
    expect(await (await fetch(`${address}/v1/calls/c1`)).json()).toMatchObject({
      toolName: 'greet',
      status: 'succeeded',
    });

    const client = new Client({ name: 'baton-command-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${address}/mcp`)));
    expect((await client.listTools()).tools.map((tool) => tool.name)).toEqual(['greet']);
    const result = await client.callTool({ name: 'greet', arguments: { who: 'MCP' } });
    expect(JSON.stringify(result.content)).toContain('hello, MCP');
    await client.close();

    child.kill('SIGTERM');
    expect(await exited).toBe(0);
    await reading;
    const logs = lines.flatMap((line) =>
      line.startsWith('{') ? [JSON.parse(line) as Record<string, unknown>] : [],
    );
    expect(logs.find((log) => log.msg === 'started')).toMatchObject({ tools: ['greet'], service: 'baton' });
    expect(logs).toContainEqual(
      expect.objectContaining({ msg: 'request', method: 'POST', url: '/v1/calls', status: 200 }),
    );
    expect(logs.at(-1)).toMatchObject({ msg: 'stopped' });
  }, 60_000);
});

/** `baton …` started, its banners read as they come: each start prints "listening on". */
function running(args: string[], cwd: string) {
  const child = spawn(process.execPath, [CLI, ...args], { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
  const addresses: string[] = [];
  /** What it wrote to stderr, by line. */
  const told: string[] = [];
  void (async () => {
    for await (const line of createInterface({ input: child.stderr })) told.push(line);
  })();
  let heard: () => void = () => {};
  void (async () => {
    for await (const line of createInterface({ input: child.stdout })) {
      const address = /^Baton is listening on (\S+)/.exec(line)?.[1];
      if (address) {
        addresses.push(address);
        heard();
      }
    }
  })();
  return {
    told,
    /** The address of its `n`th start, once it has started that often. */
    async started(n: number): Promise<string> {
      while (addresses.length < n) {
        if (child.exitCode !== null) throw new Error(`baton exited with ${child.exitCode}`);
        await new Promise<void>((resolve) => {
          heard = resolve;
          setTimeout(resolve, 100);
        });
      }
      return addresses[n - 1] as string;
    },
    async stop(): Promise<number | null> {
      const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      return exited;
    },
  };
}

async function greet(address: string): Promise<unknown> {
  const reply = await fetch(`${address}/v1/calls`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'greet', args: { who: 'you' }, sessionId: 's' }),
  });
  return ((await reply.json()) as { output: unknown }).output;
}

const GREET_SCHEMA = "{ type: 'object', properties: { who: { type: 'string' } }, required: ['who'] }";

describe('a module of tools from any kind of project', () => {
  const project = join(dir, 'commonjs-project');
  mkdirSync(project, { recursive: true });
  // `npm init`'s package.json: no "type", so `.js` is CommonJS.
  writeFileSync(join(project, 'package.json'), '{ "name": "commonjs-project", "version": "1.0.0" }\n');
  writeFileSync(
    join(project, 'required.js'),
    `const { defineTool } = require('@baton/contracts');\nmodule.exports = { greet: defineTool({ name: 'greet', description: 'Greets', input: ${GREET_SCHEMA}, execute: ({ who }) => 'hello, ' + who }) };\n`,
  );
  writeFileSync(
    join(project, 'imported.js'),
    `import { defineTool } from '@baton/contracts';\nexport const greet = defineTool({ name: 'greet', description: 'Greets', input: ${GREET_SCHEMA}, execute: ({ who }) => 'hi, ' + who });\n`,
  );
  writeFileSync(
    join(project, 'typed.ts'),
    `import { defineTool } from '@baton/contracts';\ninterface Who { who: string }\nexport const greet = defineTool({ name: 'greet', description: 'Greets', input: ${GREET_SCHEMA}, execute: ({ who }: Who): string => \`hey, \${who}\` });\n`,
  );

  it('serves CommonJS (require, module.exports), ES module syntax in a CommonJS project, and TypeScript', async () => {
    for (const [file, said] of [
      ['./required.js', 'hello, you'],
      ['./imported.js', 'hi, you'],
      ['./typed.ts', 'hey, you'],
    ] as const) {
      const server = running(['serve', file, '--port', '0', '--store', `${file}.db`], project);
      try {
        expect(await greet(await server.started(1))).toBe(said);
      } finally {
        expect(await server.stop()).toBe(0);
      }
    }
  });

  it('stops --watch when the server cannot listen (a port in use): no save would fix it', async () => {
    const held = createNetServer();
    await new Promise<void>((resolve) => held.listen(0, '127.0.0.1', resolve));
    const { port } = held.address() as AddressInfo;
    try {
      const watched = await baton(
        ['serve', './imported.js', '--watch', '--port', String(port), '--store', 'port-in-use.db'],
        project,
      );
      expect(watched.code).toBe(78);
      expect(watched.stderr).toContain(`port ${port} on 127.0.0.1 is in use`);
      expect(watched.stderr).toContain(
        'baton --watch: the server cannot listen (see above): fix the port or host, then start it again',
      );
      expect(watched.stderr).not.toContain('waiting for a change');
    } finally {
      held.close();
    }
  });

  it('restarts with --watch on every save: one that renames a new file over the module, one in place, one of a file it imports; a broken module waits for its fix', {
    // Five starts of a TypeScript module, on a machine that may be busy.
    timeout: 120_000,
  }, async () => {
    const file = join(project, 'watched.ts');
    const words = join(project, 'words.ts');
    const tools = (mark: string) =>
      `import { defineTool } from '@baton/contracts';\nimport { greeting } from './words';\ninterface Who { who: string }\nexport const greet = defineTool({ name: 'greet', description: 'Greets', input: ${GREET_SCHEMA}, execute: ({ who }: Who): string => \`\${greeting}${mark}, \${who}\` });\n`;
    writeFileSync(words, "export const greeting = 'hey';\n");
    writeFileSync(file, tools(''));
    const server = running(
      ['serve', './watched.ts', '--watch', '--port', '0', '--store', 'watched.db'],
      project,
    );
    try {
      expect(await greet(await server.started(1))).toBe('hey, you');
      // An editor's atomic save: a new file renamed over the module (a new inode).
      writeFileSync(`${file}.tmp`, tools('!'));
      renameSync(`${file}.tmp`, file);
      expect(await greet(await server.started(2))).toBe('hey!, you');
      writeFileSync(file, tools('?'));
      expect(await greet(await server.started(3))).toBe('hey?, you');
      writeFileSync(words, "export const greeting = 'hello';\n");
      expect(await greet(await server.started(4))).toBe('hello?, you');
      // Broken: the server stops, the watcher says it waits, and the fix starts it again.
      writeFileSync(file, 'export const greet = ;\n');
      await expect
        .poll(() => server.told.some((line) => line.includes('waiting for a change')), { timeout: 30_000 })
        .toBe(true);
      writeFileSync(file, tools('.'));
      expect(await greet(await server.started(5))).toBe('hello., you');
      const restarts = server.told.filter(
        (line) => line.startsWith('baton --watch:') && line.endsWith('changed: restarting'),
      );
      expect(restarts).toEqual([
        'baton --watch: watched.ts changed: restarting',
        'baton --watch: watched.ts changed: restarting',
        'baton --watch: words.ts changed: restarting',
        'baton --watch: watched.ts changed: restarting',
        'baton --watch: watched.ts changed: restarting',
      ]);
    } finally {
      expect(await server.stop()).toBe(0);
    }
  });
});
