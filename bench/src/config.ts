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
}

export function benchConfig(smoke: boolean): BenchConfig {
  return smoke
    ? {
        smoke,
        rounds: 1,
        calls: 2_000,
        sequential: 500,
        inFlight: 200,
        parked: 1_000,
        subscribers: 1_000,
        busEvents: 20_000,
      }
    : {
        smoke,
        rounds: 5,
        calls: 50_000,
        sequential: 5_000,
        inFlight: 1_000,
        parked: 10_000,
        subscribers: 10_000,
        busEvents: 1_000_000,
      };
}
