import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { BatonError, type ErrorCode } from '@baton/contracts';
import type { OpeningOptions } from './opening.js';
import type { SqliteWriter, WriterMethod } from './sqlite-writer.js';

/** What the store asks of its writer thread: one of the writer's changes, or to close. */
export interface WriterRequest {
  id: number;
  method: WriterMethod | 'close';
  args: unknown[];
}

/** A failure as it crosses between threads: a `BatonError`'s code, or SQLite's. */
export interface CrossedError {
  message: string;
  batonCode?: ErrorCode;
  code?: string;
}

export type WriterReply = { id: number; result?: unknown } | { id: number; error: CrossedError };

/** What the writer thread opens: the store's file, as the store opened it. */
export type WriterThreadData = Pick<OpeningOptions, 'path' | 'synchronous' | 'busyTimeoutMs'>;

/**
 * The writer thread's script, built beside the package's index (`dist/writer-entry.js`). From
 * `src/`, where this package's own tests run, the same path leads to the build too.
 */
const WRITER_ENTRY = new URL('../dist/writer-entry.js', import.meta.url);

/** False where the script is not beside the code (the package bundled into one file). */
export function writerThreadAvailable(): boolean {
  return existsSync(fileURLToPath(WRITER_ENTRY));
}

function errorOf(crossed: CrossedError): Error {
  if (crossed.batonCode) return new BatonError(crossed.batonCode, crossed.message);
  return Object.assign(new Error(crossed.message), crossed.code === undefined ? {} : { code: crossed.code });
}

interface Pending {
  resolve: (result: unknown) => void;
  reject: (error: Error) => void;
}

/**
 * A thread of the store's own that makes its changes on a connection of its own, in the order they
 * were asked for, while the caller's thread goes on (and reads on its own connection: WAL lets
 * readers and the writer work at once). It keeps the process alive only while a change is out.
 */
export class WriterThread {
  readonly #worker: Worker;
  readonly #pending = new Map<number, Pending>();
  #nextId = 0;
  #stopped: Error | undefined;
  /** Set by `close`: the thread keeps the process alive until it has exited. */
  #closing = false;
  #closed: Promise<void> | undefined;

  constructor(data: WriterThreadData) {
    this.#worker = new Worker(WRITER_ENTRY, { workerData: data });
    this.#worker.on('message', (reply: WriterReply) => this.#settle(reply));
    this.#worker.on('error', (error) => this.#stop(error));
    this.#worker.on('exit', (code) => this.#stop(new Error(`it exited with code ${code}`)));
    // After the listeners: listening for messages would hold the process again.
    this.#worker.unref();
  }

  /** Nothing is out: every change asked of the thread is made, and it is not closing or stopped. */
  get idle(): boolean {
    return this.#pending.size === 0 && !this.#closing && this.#stopped === undefined;
  }

  request<M extends WriterMethod>(
    method: M,
    args: Parameters<SqliteWriter[M]>,
  ): Promise<ReturnType<SqliteWriter[M]>> {
    return this.#send(method, args) as Promise<ReturnType<SqliteWriter[M]>>;
  }

  /** Settles once every change asked for before is made and the thread has closed its connection. */
  close(): Promise<void> {
    this.#closed ??= this.#close();
    return this.#closed;
  }

  async #close(): Promise<void> {
    if (this.#stopped) return;
    const exited = new Promise((resolve) => this.#worker.once('exit', resolve));
    const closed = this.#send('close', []);
    this.#closing = true;
    await closed;
    await exited;
  }

  #send(method: WriterRequest['method'], args: unknown[]): Promise<unknown> {
    if (this.#stopped) return Promise.reject(this.#stopped);
    const id = this.#nextId++;
    if (this.#pending.size === 0) this.#worker.ref();
    return new Promise((resolve, reject) => {
      this.#pending.set(id, { resolve, reject });
      this.#worker.postMessage({ id, method, args } satisfies WriterRequest);
    });
  }

  #settle(reply: WriterReply): void {
    const pending = this.#pending.get(reply.id);
    if (!pending) return;
    this.#pending.delete(reply.id);
    if (this.#pending.size === 0 && !this.#closing) this.#worker.unref();
    if ('error' in reply) pending.reject(errorOf(reply.error));
    else pending.resolve(reply.result);
  }

  /** The thread is gone: whatever was asked of it, and whatever will be, fails with why. */
  #stop(cause: Error): void {
    if (this.#stopped) return;
    this.#stopped = this.#closing
      ? new BatonError('persistence_failed', 'the SQLite store is closed')
      : new BatonError('persistence_failed', `the SQLite store's writer thread stopped: ${cause.message}`, {
          cause,
        });
    for (const pending of this.#pending.values()) pending.reject(this.#stopped);
    this.#pending.clear();
    this.#worker.unref();
  }
}
