import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { delimiter, dirname, join } from 'node:path';
import { throwawayPostgres } from '@baton/store-postgres/testing';
import pg from 'pg';
import type { BenchConfig } from '../config.js';
import { atLeast, atMost, type Row } from '../measure.js';
import { type RoleOptions, type RoleProcess, reports, runCalls, startRole, warmUp } from '../role-process.js';
import { serverCpuMeter } from '../server-cpu.js';
import { roleEnv } from './postgres.js';

const MEASURE = '8. the peers on PostgreSQL, one process, with reply';
const BATON = 'Baton, one process';
/** Baton's split path: client and worker processes. */
const BATON_SPLIT = 'Baton, clients x workers (processes)';
const SPLIT = 'adders x workers (processes)';
/** The peers the split path is measured beside: the batched ones, as Baton's one process is. */
const SPLIT_PEERS = ['graphile-worker batched per tick', 'pg-boss batched per tick'] as const;
const DBOS = 'DBOS Transact 5, a workflow of one step';
const PEERS = {
  'pg-boss per call': { PEER: 'pg-boss', MODE: 'per-call' },
  'pg-boss batched per tick': { PEER: 'pg-boss', MODE: 'batched' },
  'graphile-worker per call': { PEER: 'graphile-worker', MODE: 'per-call' },
  'graphile-worker batched per tick': { PEER: 'graphile-worker', MODE: 'batched' },
  [DBOS]: { PEER: 'dbos', MODE: 'per-call' },
} as const;
/** Baton's target against each batched peer, and against DBOS (the issues' ratios). */
const TARGETS = {
  'graphile-worker batched per tick': 1.0,
  'pg-boss batched per tick': 1.5,
  [DBOS]: 10,
} as const;

/** The oldest Node that pg-boss 12 and graphile-worker 0.18 run on. */
export const PEER_NODE_MIN = [22, 18] as const;

function nodeVersion(node: string): readonly [number, number] {
  const version = execFileSync(node, ['-p', 'process.versions.node'], { encoding: 'utf8' }).trim();
  const [major = 0, minor = 0] = version.split('.').map(Number);
  return [major, minor];
}

/**
 * The Node the peers run on: `BENCH_PEER_NODE`, or this one when it is new enough. Baton runs on
 * the same one in this row, so the ratios compare like with like.
 */
export function peerNode(): string | undefined {
  const node = process.env.BENCH_PEER_NODE || process.execPath;
  const [major, minor] = nodeVersion(node);
  const [needMajor, needMinor] = PEER_NODE_MIN;
  return major > needMajor || (major === needMajor && minor >= needMinor) ? node : undefined;
}

/** The peers' own install (`bench/peers/`): they need a newer Node than the repository does. */
const PEERS_DIR = join(import.meta.dirname, '..', 'peers');

/**
 * Installs the peers from their lock the first time, with the Node they run on (so that npm
 * checks their engines against it), and says so.
 */
export function peersInstalled(node: string): void {
  if (existsSync(join(PEERS_DIR, 'node_modules', '.package-lock.json'))) return;
  process.stderr.write('bench: installing the peers of row 8 (bench/peers), once\n');
  execFileSync('npm', ['ci', '--no-audit', '--no-fund', '--loglevel=error'], {
    cwd: PEERS_DIR,
    env: { ...process.env, PATH: `${dirname(node)}${delimiter}${process.env.PATH ?? ''}` },
    stdio: ['ignore', 'inherit', 'inherit'],
  });
}

/**
 * Baton beside pg-boss, graphile-worker and DBOS Transact, each in one process that makes its own
 * calls and runs its own jobs (or workflows), 1,000 in flight, every caller waiting for its result;
 * then Baton's split path (client and worker processes, 1 x 1 and `pgClients` x `pgWorkers`) beside
 * the batched queues split the same way (adder and worker processes)
 * (`workers/pg-peer.mjs` says how each hears of it). DBOS makes fewer calls (`dbosCalls`). Each subject gets a fresh database every round, and the subjects take
 * turns round by round, Baton between the batched peers. Each process first makes `peerWarmup`
 * calls that are not measured. Also reports CPU µs per call for each (its process's, and the
 * PostgreSQL server's where /proc shows it) and database queries per call.
 */
export async function pgPeers(config: BenchConfig): Promise<Row[] | string> {
  const node = peerNode();
  if (!node)
    return `skipped: pg-boss 12 and graphile-worker 0.18 need Node ${PEER_NODE_MIN.join('.')} or later; run the bench on it, or name one in BENCH_PEER_NODE`;
  peersInstalled(node);
  const server = await throwawayPostgres();
  const admin = new pg.Client({ connectionString: server.url });
  await admin.connect();
  /**
   * A subject: its processes on a database, the callers first (each makes the round's calls) and
   * the workers after them (they only run jobs); one process with both roles has no workers.
   */
  type Subject = [string, (url: string) => { callers: RoleOptions[]; workers: RoleOptions[] }];
  const batonRole = (url: string, role: 'client' | 'worker' | 'both'): RoleOptions => ({
    script: 'workers/pg-role.mjs',
    env: roleEnv(url, 'baton', role),
    node,
  });
  const peerRole = (
    peerName: keyof typeof PEERS,
    url: string,
    role: 'adder' | 'worker' | 'both',
  ): RoleOptions => ({
    script: 'peers/pg-peer.mjs',
    env: { ...PEERS[peerName], DATABASE_URL: url, ROLE: role },
    node,
  });
  const times = <T>(count: number, make: () => T): T[] => Array.from({ length: count }, make);
  const batonSubject: Subject = [BATON, (url) => ({ callers: [batonRole(url, 'both')], workers: [] })];
  const peer = (subject: keyof typeof PEERS): Subject => [
    subject,
    (url) => ({ callers: [peerRole(subject, url, 'both')], workers: [] }),
  ];
  /** The split path: C calling processes and W worker processes (Baton's clients, a queue's adders). */
  const split = (clients: number, workers: number) => {
    const shape = `${clients} x ${workers}`;
    const batonSplit: Subject = [
      `${BATON_SPLIT} ${shape}`,
      (url) => ({
        callers: times(clients, () => batonRole(url, 'client')),
        workers: times(workers, () => batonRole(url, 'worker')),
      }),
    ];
    const peerSplit = (peerName: (typeof SPLIT_PEERS)[number]): Subject => [
      `${peerName}, ${SPLIT} ${shape}`,
      (url) => ({
        callers: times(clients, () => peerRole(peerName, url, 'adder')),
        workers: times(workers, () => peerRole(peerName, url, 'worker')),
      }),
    ];
    return { shape, baton: batonSplit, peers: SPLIT_PEERS.map(peerSplit) };
  };
  const splits = [split(1, 1), split(config.pgClients, config.pgWorkers)];
  const subjects: Subject[] = [
    batonSubject,
    ...(Object.keys(PEERS) as Array<keyof typeof PEERS>).map(peer),
    ...splits.flatMap((each) => [each.baton, ...each.peers]),
  ];
  // Baton runs between the two batched peers that its targets compare it with, so that each ratio
  // is of runs a second or two apart, not the per-call peers' several seconds apart; so does each
  // split Baton between its split peers. Every other round runs in the reverse order, so that no
  // subject always comes first.
  const batched: Subject[] = [
    peer('graphile-worker batched per tick'),
    batonSubject,
    peer('pg-boss batched per tick'),
  ];
  const splitOrder: Subject[] = splits.flatMap(
    ({ baton, peers: [graphile, boss] }) => [graphile, baton, boss] as Subject[],
  );
  const rest: Subject[] = [peer('pg-boss per call'), peer('graphile-worker per call'), peer(DBOS)];
  const part = rowPart();
  const runOrder: Subject[] =
    part === 'one-process' ? batched : part === 'split' ? splitOrder : [...batched, ...splitOrder, ...rest];
  const results = new Map(
    subjects.map(([subject]) => [
      subject,
      { perSecond: [] as number[], cpuUs: [] as number[], serverUs: [] as number[], queries: [] as number[] },
    ]),
  );
  let databases = 0;
  const serverCpu = await serverCpuMeter(server.url);
  try {
    for (let round = 0; round < config.rounds; round++) {
      for (const [subject, options] of round % 2 === 0 ? runOrder : [...runOrder].reverse()) {
        const database = `bench_peer_${process.pid}_${databases++}`;
        await admin.query(`create database ${database}`);
        const url = new URL(server.url);
        url.pathname = `/${database}`;
        const roles = options(url.toString());
        const callers: RoleProcess[] = [];
        const workers: RoleProcess[] = [];
        try {
          // One at a time, callers first: a queue's adders make its queue and completion trigger.
          for (const caller of roles.callers) callers.push(await startRole(caller));
          for (const worker of roles.workers) workers.push(await startRole(worker));
          const [warm, calls] =
            subject === DBOS ? [config.dbosWarmup, config.dbosCalls] : [config.peerWarmup, config.pgCalls];
          // As row 7 does: each caller warms up and is measured over as many calls as a lone one.
          const inFlight = Math.max(1, Math.ceil(config.inFlight / callers.length));
          await warmUp(callers, warm, inFlight);
          await reports([...callers, ...workers]);
          const serverBefore = serverCpu?.() ?? Number.NaN;
          const started = performance.now();
          await Promise.all(callers.map((caller, c) => runCalls(caller, calls, inFlight, c * calls)));
          const seconds = (performance.now() - started) / 1_000;
          const serverUs = (serverCpu?.() ?? Number.NaN) - serverBefore;
          const total = calls * callers.length;
          const used = await reports([...callers, ...workers]);
          const result = results.get(subject);
          result?.perSecond.push(total / seconds);
          result?.cpuUs.push(used.cpuUs / total);
          result?.serverUs.push(serverUs / total);
          result?.queries.push(used.queries / total);
        } finally {
          await Promise.all([...callers, ...workers].map((role) => role.stop()));
          await admin.query(`drop database ${database} with (force)`);
        }
      }
    }
  } finally {
    await admin.end();
    await server.stop();
  }
  const rows: Row[] = [];
  for (const [subject, result] of results) {
    if (result.perSecond.length === 0) continue;
    rows.push(
      {
        measure: MEASURE,
        subject: `${subject} (${config.inFlight} in flight)`,
        unit: 'calls/s',
        values: result.perSecond,
      },
      { measure: MEASURE, subject: `${subject}: CPU per call`, unit: 'µs', values: result.cpuUs },
      ...(serverCpu
        ? [
            {
              measure: MEASURE,
              subject: `${subject}: PostgreSQL CPU per call`,
              unit: 'µs',
              values: result.serverUs,
            },
          ]
        : []),
      { measure: MEASURE, subject: `${subject}: queries per call`, unit: 'queries', values: result.queries },
    );
  }
  const baton = results.get(BATON)?.perSecond ?? [];
  for (const [peer, ratio] of Object.entries(TARGETS)) {
    const peerValues = results.get(peer)?.perSecond ?? [];
    rows.push({
      measure: MEASURE,
      subject: `Baton / ${peer}`,
      unit: 'x',
      values: baton.map((value, i) => value / (peerValues[i] ?? Number.NaN)),
      target: atLeast(ratio, 'x'),
    });
  }
  // The split path beside the same queues split the same way, and what issue 52 asks of it: its
  // PostgreSQL CPU a call within 1.5x graphile-worker batched's (one process, this run), and at
  // least half of one process's throughput.
  const ratioOf = (of: number[], to: number[]) => of.map((value, i) => value / (to[i] ?? Number.NaN));
  const graphileServerUs = results.get('graphile-worker batched per tick')?.serverUs ?? [];
  for (const {
    shape,
    baton: [batonSplit],
    peers,
  } of splits) {
    const splitResult = results.get(batonSplit);
    for (const [peerSplit] of peers) {
      rows.push({
        measure: MEASURE,
        subject: `${batonSplit} / ${peerSplit}`,
        unit: 'x',
        values: ratioOf(splitResult?.perSecond ?? [], results.get(peerSplit)?.perSecond ?? []),
      });
    }
    if (shape === splits.at(-1)?.shape) {
      rows.push(
        ...(serverCpu
          ? [
              {
                measure: MEASURE,
                subject: `${batonSplit}: PostgreSQL CPU per call / graphile-worker batched per tick's`,
                unit: 'x',
                values: ratioOf(splitResult?.serverUs ?? [], graphileServerUs),
                target: atMost(1.5, 'x'),
              },
            ]
          : []),
        {
          measure: MEASURE,
          subject: `${batonSplit} / ${BATON}`,
          unit: 'x',
          values: ratioOf(splitResult?.perSecond ?? [], baton),
          target: atLeast(0.5, 'x'),
        },
      );
    }
  }
  // A part of the row leaves the other part's subjects unmeasured, and their ratios with them.
  return rows.filter((row) => row.values.length > 0 && row.values.every((value) => !Number.isNaN(value)));
}

/**
 * `BENCH_PG_PEER_PART`: `one-process` (Baton's one process between the batched peers, with the
 * row's targets) or `split` (the split subjects) alone, for a change that touches one of them.
 */
function rowPart(): 'one-process' | 'split' | 'all' {
  const part = process.env.BENCH_PG_PEER_PART || 'all';
  if (part !== 'one-process' && part !== 'split' && part !== 'all')
    throw new Error(`BENCH_PG_PEER_PART must be one-process, split or all, not ${part}`);
  return part;
}
