// A bounded latency histogram: buckets 5% apart from 0.1 ms to about 10 minutes (about 320 of
// them), so a run of hours keeps the same few kilobytes whatever its number of calls, and a
// percentile is within 5% of the true one.
const FIRST_MS = 0.1;
const GROWTH = 1.05;
const BUCKETS = Math.ceil(Math.log(6_000_000) / Math.log(GROWTH)) + 1;

export class LatencyHistogram {
  #counts = new Array(BUCKETS).fill(0);
  #total = 0;

  record(ms) {
    const at =
      ms <= FIRST_MS ? 0 : Math.min(BUCKETS - 1, Math.ceil(Math.log(ms / FIRST_MS) / Math.log(GROWTH)));
    this.#counts[at]++;
    this.#total++;
  }

  get count() {
    return this.#total;
  }

  /** The upper bound of the bucket that holds the q-th quantile, in ms (0 when empty). */
  quantile(q) {
    if (this.#total === 0) return 0;
    const rank = Math.ceil(q * this.#total);
    let seen = 0;
    for (let at = 0; at < BUCKETS; at++) {
      seen += this.#counts[at];
      if (seen >= rank) return FIRST_MS * GROWTH ** at;
    }
    return FIRST_MS * GROWTH ** (BUCKETS - 1);
  }

  reset() {
    this.#counts.fill(0);
    this.#total = 0;
  }
}
