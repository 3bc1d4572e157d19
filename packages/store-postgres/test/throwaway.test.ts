import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import pg from 'pg';
import { describe, expect, it } from 'vitest';

const FIXTURE = join(import.meta.dirname, 'fixtures', 'hold-postgres.mjs');

/** Whether a server answers at `url`. */
async function answers(url: string): Promise<boolean> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5_000 });
  try {
    await client.connect();
    await client.end();
    return true;
  } catch {
    // Refused, or no answer: nothing serves there.
    return false;
  }
}

describe('a throw-away PostgreSQL of the tests', () => {
  it.each(['SIGINT', 'SIGTERM'] as const)(
    'is stopped when the process that started it gets %s (a test run stopped part-way)',
    { timeout: 60_000 },
    async (signal) => {
      const child = spawn(process.execPath, [FIXTURE], { stdio: ['ignore', 'pipe', 'inherit'] });
      const exited = new Promise<NodeJS.Signals | null>((resolve) =>
        child.once('exit', (_code, by) => resolve(by)),
      );
      let url = '';
      for await (const line of createInterface({ input: child.stdout })) {
        url = line;
        break;
      }
      expect(await answers(url)).toBe(true);
      child.kill(signal);
      // The process still ends by the signal, after the server is gone.
      expect(await exited).toBe(signal);
      expect(await answers(url)).toBe(false);
    },
  );
});
