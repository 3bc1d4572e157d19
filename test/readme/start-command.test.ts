import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { afterAll, describe, expect, it } from 'vitest';
import { REPOSITORY_NEEDING_22 } from './frameworks-needing-22.js';

const root = join(import.meta.dirname, '..', '..');
const dir = mkdtempSync(join(tmpdir(), 'baton-fresh-clone-'));
// A clone's node_modules takes a while to remove on a busy machine.
afterAll(() => rm(dir, { recursive: true, force: true }), 300_000);

/** The command of the README's commands table whose row says what it does. */
function readmeCommand(what: RegExp): string {
  const row = readFileSync(join(root, 'README.md'), 'utf8')
    .split('\n')
    .find((line) => line.startsWith('|') && what.test(line));
  const command = row && /`([^`]+)`\s*\|\s*$/.exec(row)?.[1];
  if (!command) throw new Error(`the README has no command for ${what}`);
  return command;
}

/**
 * Starts a README command in the clone, in its own process group, and follows what it prints:
 * the address of each start (a command under `--watch` starts again after each change).
 */
function running(command: string, cwd: string) {
  const child = spawn('bash', ['-c', command], {
    cwd,
    // Native modules (better-sqlite3) are built against the headers of the Node that runs the test.
    env: { ...process.env, BATON_PORT: '0', npm_config_nodedir: dirname(dirname(process.execPath)) },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  const exited = new Promise((resolve) => child.once('exit', resolve));
  const addresses: string[] = [];
  /** What it printed on stderr, line by line (the watcher's lines are there). */
  const told: string[] = [];
  createInterface({ input: child.stdout }).on('line', (line) => {
    const address = /Baton is listening on (\S+)/.exec(line)?.[1];
    if (address) addresses.push(address);
  });
  createInterface({ input: child.stderr }).on('line', (line) => {
    told.push(line);
    process.stderr.write(`${line}\n`);
  });
  return {
    told,
    /** The address of its `n`th start, once it has started that often. */
    async started(n: number): Promise<string> {
      await expect
        .poll(
          () => {
            if (child.exitCode !== null) throw new Error(`${command} exited with ${child.exitCode}`);
            return addresses.length;
          },
          { timeout: 300_000, interval: 100 },
        )
        .toBeGreaterThanOrEqual(n);
      return addresses[n - 1] as string;
    },
    /** Stops the whole tree (npm, turbo, node). */
    async stop() {
      if (child.pid) process.kill(-child.pid, 'SIGTERM');
      await exited;
    },
  };
}

async function greet(address: string, name: string): Promise<unknown> {
  const reply = await fetch(`${address}/v1/calls`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'greet', args: { name }, sessionId: 's1' }),
  });
  return ((await reply.json()) as { output: unknown }).output;
}

/** A TypeScript module of tools that takes its greeting from a module of its own. */
const typedTools = (mark: string) => `import { defineTool } from '@baton/contracts';
import { z } from 'zod';
import { greeting } from './greeting';

export const greet = defineTool({
  name: 'greet',
  description: 'Greets someone',
  input: z.object({ name: z.string() }),
  execute: ({ name }: { name: string }): string => \`\${greeting}${mark}, \${name}!\`,
});
`;

/** A module of tools as a reader writes one at the root of the clone (an ES module there). */
const OWN_TOOLS = `import { defineTool } from '@baton/contracts';
import { z } from 'zod';

export const greet = defineTool({
  name: 'greet',
  description: 'Greets someone',
  input: z.object({ name: z.string() }),
  execute: ({ name }) => \`Hello, \${name}!\`,
});
`;

describe("the README's rows, in order, in a fresh clone", () => {
  it('runs the example (setting the clone up), serves your own tools with npm run baton (building the server), restarts them under --watch on each kind of save, and starts the reference server, which answers /healthz', {
    timeout: 900_000,
  }, async () => {
    const clone = join(dir, 'repo');
    execFileSync('git', ['clone', '--quiet', root, clone]);
    const env = { ...process.env, npm_config_nodedir: dirname(dirname(process.execPath)) };

    // No `npm ci` first: the row sets the clone up itself.
    const example = readmeCommand(/run the example/);
    expect(example).toBe('npm run example');
    const ran = spawnSync('bash', ['-c', example], { cwd: clone, env, encoding: 'utf8' });
    process.stderr.write(ran.stderr);
    expect(ran.status).toBe(0);
    expect(ran.stdout).toContain('succeeded');
    // Its install warns of no engine but those of the frameworks that need Node 22, and of none on
    // Node 22 and later.
    const engineWarnings = [
      ...new Set([...ran.stderr.matchAll(/EBADENGINE\s+package: '(.+?)@[^@']+'/g)].map((match) => match[1])),
    ].sort();
    expect(ran.stderr).toContain('Installing the packages first');
    expect(engineWarnings).toEqual(
      Number(process.versions.node.split('.')[0]) < 22 ? REPOSITORY_NEEDING_22 : [],
    );

    // The server over your own tools: `npm run baton` installs first if need be, and builds the server.
    expect(readmeCommand(/your own tools/)).toMatch(/^npm run baton -- /);
    writeFileSync(join(clone, 'tools.js'), OWN_TOOLS);
    const own = running(readmeCommand(/your own tools/), clone);
    try {
      const address = await own.started(1);
      const tools = (await (await fetch(`${address}/v1/tools`)).json()) as Array<{ name: string }>;
      expect(tools.map((tool) => tool.name)).toEqual(['greet']);
      expect(await greet(address, 'Ada')).toBe('Hello, Ada!');
    } finally {
      await own.stop();
    }

    // The same in TypeScript under --watch: an editor's atomic save (a new file renamed over the
    // module), an edit in place, and an edit of a file it imports each start it again.
    const typed = join(clone, 'tools.ts');
    const greeting = join(clone, 'greeting.ts');
    writeFileSync(greeting, "export const greeting = 'Hello';\n");
    writeFileSync(typed, typedTools(''));
    const watched = running(readmeCommand(/restarting whenever/), clone);
    try {
      expect(await greet(await watched.started(1), 'Ada')).toBe('Hello, Ada!');
      writeFileSync(`${typed}.tmp`, typedTools(' again'));
      renameSync(`${typed}.tmp`, typed);
      expect(await greet(await watched.started(2), 'Ada')).toBe('Hello again, Ada!');
      writeFileSync(typed, typedTools(' once more'));
      expect(await greet(await watched.started(3), 'Ada')).toBe('Hello once more, Ada!');
      writeFileSync(greeting, "export const greeting = 'Welcome';\n");
      expect(await greet(await watched.started(4), 'Ada')).toBe('Welcome once more, Ada!');
      expect(watched.told.filter((line) => line.endsWith('changed: restarting'))).toEqual([
        'baton --watch: tools.ts changed: restarting',
        'baton --watch: tools.ts changed: restarting',
        'baton --watch: greeting.ts changed: restarting',
      ]);
    } finally {
      await watched.stop();
    }

    const command = readmeCommand(/reference server/);
    expect(command).toBe('npm start');
    const server = running(command, clone);
    try {
      const health = await fetch(`${await server.started(1)}/healthz`);
      expect(health.status).toBe(200);
      expect(await health.json()).toMatchObject({ ok: true });
    } finally {
      await server.stop();
    }

    // `kill -TERM` on `npm start` or `npm run baton` itself, as a process manager sends it, stops
    // the server: npm passes it on, and nothing between them keeps it (each script ends in `exec`).
    for (const args of [['start'], ['run', 'baton', '--', 'serve', './tools.js']]) {
      const npm = spawn('npm', args, {
        cwd: clone,
        env: { ...process.env, BATON_PORT: '0' },
        stdio: ['ignore', 'pipe', 'inherit'],
      });
      const stopped = new Promise((resolve) => npm.once('exit', resolve));
      let address = '';
      for await (const line of createInterface({ input: npm.stdout })) {
        address ||= /Baton is listening on (\S+)/.exec(line)?.[1] ?? '';
        if (address) break;
      }
      npm.stdout.resume();
      expect((await fetch(`${address}/healthz`)).status).toBe(200);
      npm.kill('SIGTERM');
      await stopped;
      await expect(fetch(`${address}/healthz`), `npm ${args.join(' ')}`).rejects.toThrow();
    }
  });
});
