import type { ChildProcess } from 'node:child_process';
import { existsSync, type FSWatcher, readFileSync, statSync, watch } from 'node:fs';
import { basename, dirname, join, relative, resolve } from 'node:path';
import { EXIT_CANNOT_LISTEN } from './served-runtime.js';

/** A relative specifier in an import, an export-from, a dynamic import or a require. */
const LOCAL_SPECIFIER =
  /(?:\bfrom\s*|\bimport\s*\(\s*|\brequire\s*\(\s*|\bimport\s+)['"](\.{1,2}\/[^'"]+)['"]/g;

/** How Node, and jiti for TypeScript, find the file a relative specifier names. */
const SUFFIXES = ['', '.ts', '.mts', '.cts', '.js', '.mjs', '.cjs', '/index.ts', '/index.js'];

function fileOf(from: string, specifier: string): string | undefined {
  const base = resolve(dirname(from), specifier);
  // TypeScript's own habit: `./x.js` in the source names `./x.ts`.
  const written = [
    base.replace(/\.js$/, '.ts'),
    base.replace(/\.mjs$/, '.mts'),
    base.replace(/\.cjs$/, '.cts'),
  ];
  return [...SUFFIXES.map((suffix) => base + suffix), ...written].find(
    (path) => existsSync(path) && statSync(path).isFile(),
  );
}

/**
 * The module and the local files it imports, as far as they go (read from their sources, so that
 * a file is known before it loads; packages are not followed).
 */
export function localFiles(entry: string): string[] {
  const seen = new Set<string>();
  const visit = (file: string) => {
    if (seen.has(file) || !existsSync(file)) return;
    seen.add(file);
    for (const [, specifier] of readFileSync(file, 'utf8').matchAll(LOCAL_SPECIFIER)) {
      const found = specifier && fileOf(file, specifier);
      if (found) visit(found);
    }
  };
  visit(entry);
  return seen.size > 0 ? [...seen] : [entry];
}

export interface WatchedServe {
  /** The module given to `serve`. */
  module: string;
  /** Starts the server over the module, as it is now. */
  start(): ChildProcess;
  /** Where a restart, and a wait for a fix, are told: one line each. */
  log(line: string): void;
}

/**
 * `serve --watch`: the server restarts whenever the module or a local file it imports changes.
 * Their folders are watched, not the files: an editor that saves by writing a new file and
 * renaming it over the old one is seen every time. A module that is missing, or that fails to
 * load, is told in one line, and the next change starts it again. Resolves with 0 once a signal
 * stops it, or with the server's own code when it cannot listen where it was told (a port in use),
 * which no change of the tools fixes.
 */
export function serveWatching({ module, start, log }: WatchedServe): Promise<number> {
  const entry = resolve(module);
  const shown = (file: string) => relative(process.cwd(), file) || file;
  let watchers: FSWatcher[] = [];
  let child: ChildProcess | undefined;
  let changed: string | undefined;
  let debounce: ReturnType<typeof setTimeout> | undefined;
  let stopping = false;
  /** Ends the watch with an exit code (set once the promise it resolves exists). */
  let finish: (code: number) => void = () => {};

  const stopChild = async () => {
    const running = child;
    child = undefined;
    if (!running || running.exitCode !== null || running.signalCode !== null) return;
    const exited = new Promise((done) => running.once('exit', done));
    running.kill('SIGTERM');
    await exited;
  };

  const rewatch = () => {
    for (const watcher of watchers) watcher.close();
    const byFolder = new Map<string, Set<string>>();
    for (const file of localFiles(entry)) {
      const names = byFolder.get(dirname(file)) ?? new Set<string>();
      names.add(basename(file));
      byFolder.set(dirname(file), names);
    }
    watchers = [...byFolder].map(([folder, names]) =>
      watch(folder, (_event, name) => {
        if (name && names.has(String(name))) schedule(join(folder, String(name)));
      }),
    );
  };

  const launch = () => {
    rewatch();
    if (!existsSync(entry)) {
      log(`baton --watch: ${shown(entry)} does not exist: waiting for it`);
      return;
    }
    const started = start();
    child = started;
    started.once('exit', (code, signal) => {
      if (stopping || child !== started) return;
      child = undefined;
      // It cannot listen where it was told: no change of the tools fixes that.
      if (code === EXIT_CANNOT_LISTEN) {
        log('baton --watch: the server cannot listen (see above): fix the port or host, then start it again');
        finish(code);
        return;
      }
      log(
        `baton --watch: the server stopped (${signal ?? `exit ${code}`}): waiting for a change to start it again`,
      );
    });
  };

  const restart = async () => {
    const file = changed ?? entry;
    changed = undefined;
    if (stopping) return;
    log(`baton --watch: ${shown(file)} changed: restarting`);
    await stopChild();
    if (!stopping) launch();
  };

  function schedule(file: string) {
    changed ??= file;
    clearTimeout(debounce);
    // An editor's save is several events: one restart for them all.
    debounce = setTimeout(() => void restart(), 100);
  }

  return new Promise((done) => {
    const end = () => {
      stopping = true;
      clearTimeout(debounce);
      for (const watcher of watchers) watcher.close();
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
    };
    const stop = () => {
      end();
      void stopChild().then(() => done(0));
    };
    finish = (code) => {
      end();
      done(code);
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
    launch();
  });
}
