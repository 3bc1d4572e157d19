/**
 * The real hosts, installed from npm at pinned versions, each driven headless against
 * `baton serve`'s `/mcp` and a scripted model on loopback, inside a network namespace with only
 * `lo` (see scenario.mjs). For each host and cell: the tool's result is in what the model was
 * shown exactly once, and the call ran once. What each host negotiates is checked against the MCP
 * README's host table, so a new pinned version that changes it fails here with a line saying so.
 */
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HOSTS, PINNED } from './hosts.mjs';

interface Report {
  exitCode: number | null;
  stdout: string;
  stderr: string;
  mark: string;
  requests: Array<{
    url: string;
    tools?: string[];
    results?: string[];
    move?: { call?: string; say?: string };
  }>;
  mcp: Array<{
    method: string;
    version?: string;
    capabilities?: { extensions?: object };
    initialize?: { protocolVersion?: string; capabilities?: { tasks?: object } };
  }>;
  calls: Array<{ toolName: string; status: string }>;
  restarts: number;
}

/** What each host negotiates, as the MCP README's host table says. */
const NEGOTIATES: Record<string, { revision: string; tasks: boolean }> = {
  claude: { revision: '2026-07-28', tasks: false },
  gemini: { revision: '2025-06-18', tasks: false },
  codex: { revision: '2025-06-18', tasks: false },
};
const NAMES: Record<string, string> = { claude: 'Claude Code', gemini: 'Gemini CLI', codex: 'Codex' };

const here = import.meta.dirname;
/** The hosts are kept between runs, by their pinned versions: installing them takes a while. */
const hostsDir = join(
  process.env.BATON_HOSTS_DIR ?? join(homedir(), '.cache', 'baton-hosts'),
  Object.entries(PINNED)
    .map(([name, version]) => `${name.replace(/\W/g, '_')}-${version}`)
    .join('+'),
);
const work = mkdtempSync(join(tmpdir(), 'baton-hosts-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

beforeAll(() => {
  const pinned = Object.entries(PINNED).map(([name, version]) => `${name}@${version}`);
  const installed = Object.values(HOSTS).every(({ bin }) =>
    existsSync(join(hostsDir, 'node_modules', '.bin', bin)),
  );
  if (installed) return;
  mkdirSync(hostsDir, { recursive: true });
  execFileSync('npm', ['install', '--no-save', '--no-audit', '--no-fund', '--prefix', hostsDir, ...pinned], {
    stdio: 'inherit',
  });
}, 600_000);

/** Runs one cell in a network namespace of its own, with only loopback. */
function scenario(host: string, cell: string): Promise<Report> {
  const dir = join(work, `${host}-${cell}`);
  mkdirSync(dir, { recursive: true });
  const child = spawn(
    'unshare',
    [
      '--net',
      'sh',
      '-c',
      'ip link set lo up && exec "$@"',
      'sh',
      process.execPath,
      join(here, 'scenario.mjs'),
      host,
      cell,
      hostsDir,
      dir,
    ],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  let out = '';
  child.stdout.on('data', (chunk: Buffer) => {
    out += chunk;
  });
  return new Promise((resolve, reject) => {
    child.on('close', (code) => {
      const last = out.trim().split('\n').at(-1) ?? '';
      if (code !== 0 || !last.startsWith('{'))
        reject(new Error(`the ${host} ${cell} scenario exited ${code}: ${out}`));
      else resolve(JSON.parse(last) as Report);
    });
  });
}

/** The requests of the conversation the scenario's tool was given in (a host asks other things too). */
const conversation = (report: Report) =>
  report.requests.filter((request) => (request.tools?.length ?? 0) > 0 && request.move);

/**
 * The revision a host works in and whether it takes tasks: 2025's at `initialize`, 2026-07-28's
 * on each request (its header and its `_meta`).
 */
function negotiated(report: Report): { revision: string | undefined; tasks: boolean } {
  const opened = report.mcp.find((request) => request.method === 'initialize')?.initialize;
  if (opened) return { revision: opened.protocolVersion, tasks: opened.capabilities?.tasks !== undefined };
  const listed = report.mcp.find((request) => request.method === 'tools/list');
  const extensions = Object.keys(listed?.capabilities?.extensions ?? {});
  return { revision: listed?.version, tasks: extensions.some((key) => key.includes('tasks')) };
}

/** How many times the mark is in the tool results the model was shown at its last request. */
function shownTimes(report: Report): number {
  const last = conversation(report).at(-1);
  return (last?.results ?? []).join('\n').split(report.mark).length - 1;
}

/**
 * A slow call followed to its result: the model called the tool, then wait_background with the
 * acknowledgement's call_id, then answered; it was shown the result once, and the call ran once.
 */
function expectFollowedOnce(report: Report): void {
  expect(report.exitCode, report.stderr).toBe(0);
  const moves = conversation(report).map(
    (request) => request.move?.call?.replace(/^mcp_+baton_+/, '') ?? 'say',
  );
  expect(moves).toEqual(['slow_lookup', 'wait_background', 'say']);
  expect(shownTimes(report)).toBe(1);
  expect(report.calls).toEqual([{ toolName: 'slow_lookup', status: 'succeeded' }]);
}

describe.each(Object.keys(NEGOTIATES))('%s, installed from npm, headless', (host) => {
  const pinnedAs = HOSTS[host as keyof typeof HOSTS];
  const name = `${NAMES[host]} ${PINNED[pinnedAs.package as keyof typeof PINNED]}`;

  it('fast: the tool answers within its call, and the model is shown its result once', {
    timeout: 120_000,
  }, async () => {
    const report = await scenario(host, 'fast');
    expect(report.exitCode, report.stderr).toBe(0);
    const expected = NEGOTIATES[host] as { revision: string; tasks: boolean };
    const found = negotiated(report);
    expect(
      found,
      `${name} now negotiates ${found.revision} (tasks: ${found.tasks}); the MCP README's host table says ${expected.revision} (tasks: ${expected.tasks}): measure it again and update the table`,
    ).toEqual(expected);
    expect(shownTimes(report)).toBe(1);
    expect(report.calls).toEqual([{ toolName: 'quick_lookup', status: 'succeeded' }]);
  });

  it('slow, headless: the acknowledgement names wait_background, the model calls it, and is shown the result once', {
    timeout: 120_000,
  }, async () => {
    expectFollowedOnce(await scenario(host, 'slow-headless'));
  });

  it('slow, with Baton restarted while the call runs: the next start finishes it, and wait_background gives it once', {
    timeout: 120_000,
  }, async () => {
    const report = await scenario(host, 'slow-restart');
    expect(report.restarts).toBe(1);
    expectFollowedOnce(report);
  });
});
