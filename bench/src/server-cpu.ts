import { readdirSync, readFileSync } from 'node:fs';
import pg from 'pg';

/** Linux counts a process's CPU in clock ticks of 1/100 s (USER_HZ) on every architecture Node runs on. */
const TICK_US = 10_000;

/** Fields 14-17 of `/proc/<pid>/stat` (after the command's closing parenthesis: 12-15), in ticks. */
function ticksOf(pid: string, withReaped: boolean): { parent: string; ticks: number } | undefined {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return undefined; // It exited between the listing and the read: its time is its parent's now.
  }
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const [user, system, reapedUser, reapedSystem] = [11, 12, 13, 14].map((at) => Number(fields[at]));
  const ticks = (user ?? 0) + (system ?? 0) + (withReaped ? (reapedUser ?? 0) + (reapedSystem ?? 0) : 0);
  return { parent: fields[1] ?? '', ticks };
}

/**
 * A meter of the CPU a local PostgreSQL server uses, its postmaster and every process it started
 * (backends, writers, autovacuum): read from /proc, so only on Linux and only for a server on this
 * machine. A backend that exits is counted still, in its parent's time of reaped children.
 * Resolves with undefined where the server's processes cannot be read.
 */
export async function serverCpuMeter(url: string): Promise<(() => number) | undefined> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  let postmaster: string | undefined;
  try {
    const { rows } = await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
    // Read while the backend runs: its parent is the postmaster.
    postmaster = ticksOf(String(rows[0]?.pid), false)?.parent;
  } finally {
    await client.end();
  }
  const server = postmaster;
  if (server === undefined || ticksOf(server, true) === undefined) return undefined;
  /** The server's CPU so far, µs. */
  return () => {
    let ticks = ticksOf(server, true)?.ticks ?? 0;
    for (const pid of readdirSync('/proc')) {
      if (!/^\d+$/.test(pid)) continue;
      const child = ticksOf(pid, false);
      if (child?.parent === server) ticks += child.ticks;
    }
    return ticks * TICK_US;
  };
}
