import { spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { conformanceNode } from './conformance-node.js';
import { EXPECTED_FAILURES } from './expected-failures.js';
import { startFixtureServer } from './fixture-server.js';

const require = createRequire(import.meta.url);

/** The CLI of one pinned version of the official suite (`conformance-2025` / `conformance-2026`). */
function cli(alias: string): string {
  return join(dirname(require.resolve(`${alias}/package.json`)), 'dist', 'index.js');
}

/** The tasks extension's scenarios (SEP-2663), run one by one: they belong to no revision's suite. */
export const TASKS_SCENARIOS = [
  'tasks-lifecycle',
  'tasks-capability-negotiation',
  'tasks-wire-fields',
  'tasks-request-state-removal',
  'tasks-mrtr-input',
  'tasks-request-headers',
  'tasks-dispatch-and-envelope',
  'tasks-status-notifications',
  'tasks-required-task-error',
  'tasks-mrtr-composition',
];

export interface SuiteRun {
  name: string;
  /** Scenario names, each with whether every one of its checks passed (a warning is no failure). */
  scenarios: Map<string, boolean>;
  /** Failed, and not expected to. */
  unexpected: string[];
  /** Expected to fail, and passed: its entry is stale. */
  stale: string[];
  summary: string;
}

/** What each scenario's `checks.json` says, from the folders the suite wrote (`server-<name>-<time>`). */
function scenariosIn(dir: string): Map<string, boolean> {
  const scenarios = new Map<string, boolean>();
  for (const entry of readdirSync(dir)) {
    const name = /^server-(.+)-\d{4}-\d{2}-\d{2}T[\d-]+Z$/.exec(entry)?.[1];
    if (!name) continue;
    const checks = JSON.parse(readFileSync(join(dir, entry, 'checks.json'), 'utf8')) as Array<{
      status: string;
    }>;
    scenarios.set(name, (scenarios.get(name) ?? true) && checks.every((check) => check.status !== 'FAILURE'));
  }
  return scenarios;
}

function run(binary: string, args: string[]): Promise<{ output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(binary, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    child.stderr.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    child.on('error', reject);
    // The verdict is read from the checks the suite wrote, not from its exit code.
    child.on('close', () => resolve({ output }));
  });
}

/** The summary the suite prints at the end, or its last lines when it printed none. */
function summaryOf(output: string): string {
  const at = output.lastIndexOf('=== SUMMARY ===');
  return at === -1 ? output.split('\n').slice(-40).join('\n') : output.slice(at);
}

/**
 * Runs the official conformance suite against the fixture server: 0.1.16 for 2025-11-25,
 * 0.2.0-alpha.12 for 2026-07-28 and the tasks extension. A scenario fails when one of its checks
 * does; a warning is no failure.
 */
export async function runConformance(outputDir: string): Promise<SuiteRun[]> {
  const server = await startFixtureServer();
  const node = conformanceNode();
  const suite = async (name: string, alias: string, runs: string[][], expected: readonly string[]) => {
    const dir = join(outputDir, name);
    let output = '';
    for (const args of runs) {
      const result = await run(node, [
        cli(alias),
        'server',
        '--url',
        server.url,
        ...args,
        '--output-dir',
        dir,
      ]);
      output += result.output;
    }
    const scenarios = scenariosIn(dir);
    const failed = [...scenarios].filter(([, passed]) => !passed).map(([scenario]) => scenario);
    results.push({
      name,
      scenarios,
      unexpected: failed.filter((scenario) => !expected.includes(scenario)),
      stale: expected.filter((scenario) => scenarios.get(scenario) === true),
      summary: summaryOf(output),
    });
  };
  const results: SuiteRun[] = [];
  try {
    await suite('2025-11-25', 'conformance-2025', [[]], EXPECTED_FAILURES['2025-11-25'] ?? []);
    await suite(
      '2026-07-28',
      'conformance-2026',
      [
        ['--suite', 'all', '--spec-version', '2026-07-28'],
        ...TASKS_SCENARIOS.map((scenario) => ['--scenario', scenario, '--force']),
      ],
      EXPECTED_FAILURES['2026-07-28'] ?? [],
    );
  } finally {
    await server.close();
  }
  return results;
}
