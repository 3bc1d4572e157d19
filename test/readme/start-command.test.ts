import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { afterAll, describe, expect, it } from 'vitest';

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

describe("the README's start command", () => {
  it('sets up and starts the server from a fresh clone, which answers /healthz', {
    timeout: 600_000,
  }, async () => {
    const command = readmeCommand(/reference server/);
    expect(command).toMatch(/npm start/);
    const clone = join(dir, 'repo');
    execFileSync('git', ['clone', '--quiet', root, clone]);
    // Its own process group, so that the whole tree (npm, turbo, node) stops at the end.
    const child = spawn('bash', ['-c', command], {
      cwd: clone,
      // Native modules (better-sqlite3) are built against the headers of the Node that runs the test.
      env: { ...process.env, BATON_PORT: '0', npm_config_nodedir: dirname(dirname(process.execPath)) },
      stdio: ['ignore', 'pipe', 'inherit'],
      detached: true,
    });
    const exited = new Promise((resolve) => child.once('exit', resolve));
    try {
      let address = '';
      for await (const line of createInterface({ input: child.stdout })) {
        const match = /Baton is listening on (\S+)/.exec(line);
        if (match?.[1]) {
          address = match[1];
          break;
        }
      }
      child.stdout.resume();
      const health = await fetch(`${address}/healthz`);
      expect(health.status).toBe(200);
      expect(await health.json()).toMatchObject({ ok: true });
    } finally {
      if (child.pid) process.kill(-child.pid, 'SIGTERM');
      await exited;
    }

    // `kill -TERM` on `npm start` itself stops the server: npm passes it on, and nothing between
    // them keeps it.
    const started = spawn('npm', ['start'], {
      cwd: clone,
      env: { ...process.env, BATON_PORT: '0' },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const stopped = new Promise((resolve) => started.once('exit', resolve));
    let address = '';
    for await (const line of createInterface({ input: started.stdout })) {
      address ||= /Baton is listening on (\S+)/.exec(line)?.[1] ?? '';
      if (address) break;
    }
    started.stdout.resume();
    expect((await fetch(`${address}/healthz`)).status).toBe(200);
    started.kill('SIGTERM');
    await stopped;
    await expect(fetch(`${address}/healthz`)).rejects.toThrow();
  });
});
