import { connect, createServer, type Server, type Socket } from 'node:net';
import { freshDatabase, throwawayPostgres } from '@baton/store-postgres/testing';

/**
 * A TCP proxy in front of a database, to make the faults a network or a failover makes: every
 * connection cut and new ones refused for a while, or every connection hung (nothing crosses it,
 * either way, new ones included) for a while and then let go on as if nothing happened.
 */
export interface TcpProxy {
  /** Where to connect instead of the target: `127.0.0.1:port`. */
  port: number;
  /** Cuts every connection, and resets every new one, for `ms`. */
  cut(ms: number): Promise<void>;
  /** Holds every byte of every connection, old and new, for `ms`; then they all go on. */
  hang(ms: number): Promise<void>;
  close(): Promise<void>;
}

interface Pair {
  client: Socket;
  server: Socket | undefined;
}

export async function tcpProxy(target: { host: string; port: number }): Promise<TcpProxy> {
  const pairs = new Set<Pair>();
  let fault: 'cut' | 'hang' | undefined;
  /** Connections that came during a hang: connected to the target once it ends. */
  const held: Pair[] = [];

  const join = (pair: Pair) => {
    const server = connect(target);
    pair.server = server;
    server.on('error', () => pair.client.destroy());
    pair.client.on('error', () => server.destroy());
    server.on('close', () => pair.client.destroy());
    pair.client.on('close', () => {
      server.destroy();
      pairs.delete(pair);
    });
    pair.client.pipe(server);
    server.pipe(pair.client);
  };

  const proxy: Server = createServer((client) => {
    if (fault === 'cut') {
      client.resetAndDestroy();
      return;
    }
    const pair: Pair = { client, server: undefined };
    pairs.add(pair);
    if (fault === 'hang') {
      client.pause();
      held.push(pair);
      return;
    }
    join(pair);
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  const address = proxy.address();
  if (address === null || typeof address === 'string') throw new Error('the proxy has no port');

  const forMs = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
  return {
    port: address.port,
    async cut(ms) {
      fault = 'cut';
      for (const pair of [...pairs]) {
        pair.client.resetAndDestroy();
        pair.server?.destroy();
        pairs.delete(pair);
      }
      await forMs(ms);
      fault = undefined;
    },
    async hang(ms) {
      fault = 'hang';
      for (const { client, server } of pairs) {
        client.pause();
        server?.pause();
      }
      await forMs(ms);
      fault = undefined;
      for (const { client, server } of pairs) {
        client.resume();
        server?.resume();
      }
      for (const pair of held.splice(0)) {
        pair.client.resume();
        join(pair);
      }
    },
    async close() {
      for (const { client, server } of pairs) {
        client.destroy();
        server?.destroy();
      }
      await new Promise((resolve) => proxy.close(resolve));
    },
  };
}

/** A throw-away PostgreSQL with a fresh database: reached straight, for the checks, and through a proxy, for Baton's processes. */
export interface ProxiedDatabase {
  direct: string;
  proxied: string;
  proxy: TcpProxy;
  /** Closes the proxy and stops the server. */
  stop(): Promise<void>;
}

export async function proxiedDatabase(name: string): Promise<ProxiedDatabase> {
  const postgres = await throwawayPostgres();
  const direct = await freshDatabase(postgres.url, name);
  const url = new URL(direct);
  const proxy = await tcpProxy({ host: url.hostname, port: Number(url.port) });
  url.host = `127.0.0.1:${proxy.port}`;
  return {
    direct,
    proxied: url.toString(),
    proxy,
    async stop() {
      await proxy.close();
      await postgres.stop();
    },
  };
}
