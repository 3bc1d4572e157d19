import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { runConformance } from './conformance/run.js';

const outputDir = mkdtempSync(join(tmpdir(), 'baton-conformance-'));
afterAll(() => rmSync(outputDir, { recursive: true, force: true }));

it('passes the official MCP conformance suite: 2025-11-25, 2026-07-28 and the tasks extension', async () => {
  const runs = await runConformance(outputDir);
  for (const run of runs) {
    const passed = [...run.scenarios.values()].filter(Boolean).length;
    console.log(`--- ${run.name}: ${passed} of ${run.scenarios.size} scenarios passed\n${run.summary}`);
  }
  expect(runs.map((run) => run.name)).toEqual(['2025-11-25', '2026-07-28']);
  for (const run of runs) {
    expect(run.scenarios.size, `${run.name} ran no scenario`).toBeGreaterThan(20);
    expect({ suite: run.name, unexpected: run.unexpected, stale: run.stale }).toEqual({
      suite: run.name,
      unexpected: [],
      stale: [],
    });
  }
}, 600_000);
