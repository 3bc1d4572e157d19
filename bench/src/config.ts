/** How big a run is: the full bench, or the smoke round that CI runs so the bench cannot rot. */
export interface BenchConfig {
  smoke: boolean;
  rounds: number;
  /** Calls per throughput round. */
  calls: number;
  /** Sequential calls per latency round. */
  sequential: number;
  /** Calls in flight for the promotion and SQLite measures. */
  inFlight: number;
  /** Calls parked in the background for the memory measure. */
  parked: number;
  /** Per-call subscribers and events for the bus measure. */
  subscribers: number;
  busEvents: number;
  /** Calls of each calling process in a PostgreSQL round (rows 7, 8); row 7's clients and workers. */
  pgCalls: number;
  /**
   * Calls each client process of row 7 makes before a round is measured, so JIT warm-up is not
   * counted: a client's CPU per call falls over its first 10,000-15,000 calls, then holds.
   */
  pgWarmup: number;
  /** The same for each process of row 8 (the peers' slowest do 1,000-2,000 calls a second). */
  peerWarmup: number;
  /**
   * Row 8's DBOS Transact, measured and warmed up with fewer calls than the others (it does a few
   * hundred workflows a second): a rate over several times the calls in flight all the same.
   */
  dbosCalls: number;
  dbosWarmup: number;
  pgClients: number;
  pgWorkers: number;
}

/** A whole number from the environment, for a bench on a larger machine: `BENCH_ROUNDS=9`. */
function fromEnvironment(name: string, fallback: number): number {
  const given = process.env[name];
  if (given === undefined || given === '') return fallback;
  const value = Number(given);
  if (!Number.isSafeInteger(value) || value < 1)
    throw new Error(`${name} must be a whole number above 0, not ${given}`);
  return value;
}

/**
 * The smoke round or the full bench. `BENCH_ROUNDS`, `BENCH_CALLS`, `BENCH_IN_FLIGHT`,
 * `BENCH_PG_CALLS`, `BENCH_PG_WARMUP`, `BENCH_PG_PEER_WARMUP`, `BENCH_PG_DBOS_CALLS`,
 * `BENCH_PG_DBOS_WARMUP`, `BENCH_PG_CLIENTS` and
 * `BENCH_PG_WORKERS` change the full bench's sizes, so the same bench runs on a larger machine.
 */
export function benchConfig(smoke: boolean): BenchConfig {
  if (smoke) {
    return {
      smoke,
      rounds: 1,
      calls: 2_000,
      sequential: 500,
      inFlight: 200,
      parked: 1_000,
      subscribers: 1_000,
      busEvents: 20_000,
      pgCalls: 500,
      pgWarmup: 100,
      peerWarmup: 100,
      dbosCalls: 500,
      dbosWarmup: 100,
      pgClients: 2,
      pgWorkers: 2,
    };
  }
  return {
    smoke,
    rounds: fromEnvironment('BENCH_ROUNDS', 5),
    calls: fromEnvironment('BENCH_CALLS', 50_000),
    sequential: 5_000,
    inFlight: fromEnvironment('BENCH_IN_FLIGHT', 1_000),
    parked: 10_000,
    subscribers: 10_000,
    busEvents: 1_000_000,
    pgCalls: fromEnvironment('BENCH_PG_CALLS', 10_000),
    pgWarmup: fromEnvironment('BENCH_PG_WARMUP', 20_000),
    peerWarmup: fromEnvironment('BENCH_PG_PEER_WARMUP', 10_000),
    dbosCalls: fromEnvironment('BENCH_PG_DBOS_CALLS', 4_000),
    dbosWarmup: fromEnvironment('BENCH_PG_DBOS_WARMUP', 2_000),
    pgClients: fromEnvironment('BENCH_PG_CLIENTS', 2),
    pgWorkers: fromEnvironment('BENCH_PG_WORKERS', 2),
  };
}
