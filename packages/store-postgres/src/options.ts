import pg from 'pg';

export interface PostgresStoreOptions {
  /** `postgres://user:password@host:port/database` */
  connectionString: string;
  /** The schema that holds Baton's tables, made if missing. Default `baton`. */
  schema?: string;
  /** Connections in the pool. Default 10. */
  maxConnections?: number;
  /**
   * Write batches in flight at once, each its own transaction on its own connection, so the
   * database is kept busy while the runtime runs the calls of the next; one call's writes stay in
   * order. At most half the connections: the rest read and claim. Default 3.
   *
   * Taken by a runtime in the role `both` (it runs the calls it writes). A client or a worker alone
   * writes one batch at a time, each tick whole: measured with a client and a worker process,
   * pipelining cost the client more CPU per call for no more calls per second.
   */
  writeConcurrency?: number;
  /**
   * At most this many calls' rows in one write batch (see `Store.writeBatchCalls`), with the same
   * proviso; the runtime cuts a tick into about four batches of its calls in flight, of at least
   * 100 calls. Default 250: with 1,000 calls in flight in one process, four batches take turns,
   * and did more calls a second than whole ticks (`bench/RESULTS.md`, row 8).
   */
  writeBatchCalls?: number;
  /**
   * Start afresh on purpose in a schema that exists and holds no Baton store (emptied, or made
   * empty for it), or whose store lost its tables: such a schema is otherwise refused, so that a
   * store that was emptied is not silently replaced. A schema of another program is refused anyway.
   */
  init?: boolean;
}

export const SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,55}$/;

/** A count among the options: a whole number of at least 1. */
export function wholeOption(name: string, value: number): number {
  if (!Number.isInteger(value) || value < 1) {
    throw new Error(`postgresStore: ${name} must be a whole number of at least 1, not ${String(value)}`);
  }
  return value;
}

const INT8_OID = 20;

/** Times in milliseconds since the epoch are BIGINT; they fit a JavaScript number. */
export const int8AsNumber = ((oid: number, format?: 'text' | 'binary') =>
  oid === INT8_OID ? Number : pg.types.getTypeParser(oid, format)) as typeof pg.types.getTypeParser;
