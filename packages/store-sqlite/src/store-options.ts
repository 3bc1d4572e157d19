export interface SqliteStoreOptions {
  /** The database file (created if missing), or `:memory:`. */
  path: string;
  /**
   * `normal` (default): with WAL, a commit survives the process crashing; `full`: it also survives
   * the machine losing power, at the price of an fsync per commit.
   */
  synchronous?: 'normal' | 'full';
  /** How long a write waits for another process's lock before it fails. Default 5 s. */
  busyTimeoutMs?: number;
  /**
   * Start afresh on purpose where a Baton store used to be. Without it, a store whose file was
   * emptied or deleted (a marker `PATH.baton` beside it remembers it) is refused at open.
   */
  init?: boolean;
  /** `quick` (default): `PRAGMA quick_check` when the file is opened; `none`: skip it. */
  check?: 'quick' | 'none';
  /**
   * `true` (default): the store's changes are made on a thread of its own, with a connection of its
   * own, while reads stay on the caller's thread. A batch is committed (and, with `full`, synced to
   * disk) while the event loop runs the next calls. `false`: every change on the caller's thread,
   * as `:memory:` always is (a second connection would open another database).
   */
  writerThread?: boolean;
}
