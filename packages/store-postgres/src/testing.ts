import { execFile, execFileSync } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';

export interface ThrowawayPostgres {
  /** A database URL for the server's `postgres` database, as the superuser `baton`. */
  url: string;
  stop(): Promise<void>;
  /** Restarts the server (`pg_ctl restart -m fast`): every connection drops. Only for one of its own. */
  restart(): Promise<void>;
  /**
   * An outage: stops the server (`-m fast`: every connection drops), keeps it down for `ms`, and
   * starts it again. Only for one of its own.
   */
  outage(ms: number): Promise<void>;
}

/** Where Debian puts a PostgreSQL's programs, when they are not on the PATH. */
function binDir(): string {
  const root = '/usr/lib/postgresql';
  const version = existsSync(root) ? readdirSync(root).sort().at(-1) : undefined;
  if (!version) throw new Error('PostgreSQL is not installed: apt-get install -y postgresql');
  return join(root, version, 'bin');
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject()));
    });
  });
}

/** The servers this process started and has not stopped yet: each one's stop, done at once. */
const running = new Set<() => void>();
let armed = false;

function stopAll(): void {
  for (const stop of running) {
    try {
      stop();
    } catch (error) {
      process.stderr.write(`a throw-away PostgreSQL did not stop: ${String(error)}\n`);
    }
  }
}

/**
 * A process that ends (normally, or by Ctrl-C or a kill, as when `npm test` is stopped part-way)
 * stops the servers it started and deletes their folders: none is left running behind. After a
 * signal, the signal's own default follows (the process ends).
 */
function stopRunningAtExit(): void {
  if (armed) return;
  armed = true;
  process.once('exit', stopAll);
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      stopAll();
      process.kill(process.pid, signal);
    });
  }
}

/**
 * The PostgreSQL server of `BATON_TEST_POSTGRES_URL` (as `.ci/run` starts one), or else (or with
 * `own`) a new one on loopback in a temporary directory, stopped and deleted by `stop()`. PostgreSQL refuses to run
 * as root, so as root it runs as the `postgres` user.
 */
export async function throwawayPostgres(options: { own?: boolean } = {}): Promise<ThrowawayPostgres> {
  const given = process.env.BATON_TEST_POSTGRES_URL;
  if (given && !options.own) {
    return {
      url: given,
      stop: async () => {},
      restart: async () => {
        throw new Error('a shared PostgreSQL is not restarted: ask for one of its own ({ own: true })');
      },
      outage: async () => {
        throw new Error('a shared PostgreSQL is not stopped: ask for one of its own ({ own: true })');
      },
    };
  }
  const bin = binDir();
  const dir = mkdtempSync(join(tmpdir(), 'baton-pg-'));
  const asRoot = userInfo().uid === 0;
  if (asRoot) {
    const id = (name: string) => Number(execFileSync('id', [name, 'postgres']).toString());
    chownSync(dir, id('-u'), id('-g'));
  }
  const run = (program: string, args: string[]) =>
    asRoot
      ? execFileSync('runuser', ['-u', 'postgres', '--', join(bin, program), ...args], {
          stdio: 'pipe',
          cwd: dir,
        })
      : execFileSync(join(bin, program), args, { stdio: 'pipe', cwd: dir });
  // Asynchronous: the test's own clients keep calling while the server goes down and up.
  const pgCtl = async (args: string[]) => {
    const program = join(bin, 'pg_ctl');
    await promisify(execFile)(
      asRoot ? 'runuser' : program,
      asRoot ? ['-u', 'postgres', '--', program, ...args] : args,
      { cwd: dir },
    );
  };
  const data = join(dir, 'data');
  run('initdb', ['-D', data, '-U', 'baton', '-A', 'trust', '-E', 'UTF8', '--no-sync']);
  const port = await freePort();
  const settings = `-c listen_addresses=127.0.0.1 -p ${port} -k ${dir} -c fsync=off -c max_connections=300`;
  run('pg_ctl', ['-D', data, '-o', settings, '-l', join(dir, 'log'), '-w', 'start']);
  const stopNow = () => {
    running.delete(stopNow);
    try {
      run('pg_ctl', ['-D', data, '-m', 'immediate', '-w', 'stop']);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  };
  stopRunningAtExit();
  running.add(stopNow);
  return {
    url: `postgres://baton@127.0.0.1:${port}/postgres`,
    async stop() {
      stopNow();
    },
    async restart() {
      await pgCtl(['-D', data, '-o', settings, '-l', join(dir, 'log'), '-m', 'fast', '-w', 'restart']);
    },
    async outage(ms: number) {
      await pgCtl(['-D', data, '-m', 'fast', '-w', 'stop']);
      await new Promise((resolve) => setTimeout(resolve, ms));
      await pgCtl(['-D', data, '-o', settings, '-l', join(dir, 'log'), '-w', 'start']);
    },
  };
}

let databases = 0;

/**
 * A new, empty database on the server of `url` (a throw-away one's), named after `prefix`: a test
 * that needs a store of its own, not the schema another test left. Its URL.
 */
export async function freshDatabase(url: string, prefix: string): Promise<string> {
  const name = `${prefix}_${process.pid}_${Date.now()}_${databases++}`;
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
  const database = new URL(url);
  database.pathname = `/${name}`;
  return database.toString();
}
