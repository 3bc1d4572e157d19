import type { StoreNotice } from '@baton/store';
import pg from 'pg';

type Listener = (notice: StoreNotice) => void;

/** After a dropped LISTEN connection, the next try comes this much later (the runtime polls meanwhile). */
const RELISTEN_MS = 1_000;

const LISTENING: StoreNotice = { type: 'listening' };

/**
 * One connection per store LISTENs on the channels that have listeners, and is made again when it
 * drops. Each listener hears `listening` once its channel is listened to, and again after every new
 * connection: a notice sent while nothing listened is lost, and that tells it to read again.
 */
export class ListenConnection {
  readonly #listeners = new Map<string, Set<Listener>>();
  /** The channels of the current connection: LISTEN sent (`pending`), or done (`listened`). */
  readonly #channels = new Map<string, 'pending' | 'listened'>();
  #client: pg.Client | undefined;
  #connected = false;
  #closed = false;

  constructor(private readonly config: pg.ClientConfig) {}

  listen(channel: string, listener: Listener): () => void {
    let listeners = this.#listeners.get(channel);
    if (!listeners) {
      listeners = new Set();
      this.#listeners.set(channel, listeners);
    }
    listeners.add(listener);
    const client = this.#client;
    const state = this.#channels.get(channel);
    if (!client) void this.#connect();
    else if (state === 'listened') {
      // Not from inside listen(): the caller may not be ready for it yet.
      queueMicrotask(() => {
        if (listeners.has(listener) && this.#channels.get(channel) === 'listened') listener(LISTENING);
      });
    } else if (state === undefined && this.#connected) {
      this.#listenOn(client, [channel]).catch(() => this.#drop(client));
    }
    return () => this.#unlisten(channel, listener);
  }

  #unlisten(channel: string, listener: Listener): void {
    const listeners = this.#listeners.get(channel);
    if (!listeners?.delete(listener) || listeners.size > 0) return;
    this.#listeners.delete(channel);
    const client = this.#client;
    if (!client || !this.#channels.delete(channel) || !this.#connected) return;
    // A failed UNLISTEN means a failed connection, which its `error` handler makes again.
    client.query(`UNLISTEN ${channel}`).catch(() => this.#drop(client));
  }

  async #listenOn(client: pg.Client, channels: readonly string[]): Promise<void> {
    if (channels.length === 0) return;
    for (const channel of channels) this.#channels.set(channel, 'pending');
    // Channel names are made of [a-z0-9_] (see Channels): no quoting needed.
    await client.query(channels.map((channel) => `LISTEN ${channel}`).join('; '));
    if (this.#client !== client) return;
    for (const channel of channels) {
      const listeners = this.#listeners.get(channel);
      if (!listeners || this.#channels.get(channel) !== 'pending') continue;
      this.#channels.set(channel, 'listened');
      for (const listener of listeners) listener(LISTENING);
    }
  }

  async #connect(): Promise<void> {
    if (this.#closed) return;
    const client = new pg.Client(this.config);
    this.#client = client;
    this.#connected = false;
    this.#channels.clear();
    const drop = () => this.#drop(client);
    client.on('error', drop);
    client.on('end', drop);
    client.on('notification', (message) => {
      const listeners = this.#listeners.get(message.channel);
      if (!listeners || message.payload === undefined) return;
      const notice = JSON.parse(message.payload) as StoreNotice;
      for (const listener of listeners) listener(notice);
    });
    try {
      await client.connect();
      if (this.#client !== client) return;
      this.#connected = true;
      await this.#listenOn(client, [...this.#listeners.keys()]);
    } catch {
      drop();
    }
  }

  /** A connection that failed: ended, and another made a little later while anyone listens. */
  #drop(client: pg.Client): void {
    if (this.#client !== client) return;
    this.#client = undefined;
    this.#connected = false;
    this.#channels.clear();
    // The connection already failed (that is why this runs): ending it may fail too, to no loss.
    client.end().catch(() => {});
    if (!this.#closed && this.#listeners.size > 0)
      setTimeout(() => void this.#connect(), RELISTEN_MS).unref();
  }

  async close(): Promise<void> {
    this.#closed = true;
    const client = this.#client;
    this.#client = undefined;
    // Closing: a connection that is gone already must not keep the store from closing.
    await client?.end().catch(() => {});
  }
}
