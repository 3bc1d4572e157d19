/**
 * An earlier version of Baton, from this repository's history, runnable beside this one: its tree
 * unpacked from git into a directory of its own, on this tree's installed packages (its own
 * workspaces in place of this tree's), and the packages its server needs built (JavaScript only).
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const ROOT = join(import.meta.dirname, '..', '..');

/** What `baton serve` and `baton worker` load, in the order they are built. */
const BUILT = [
  'packages/contracts',
  'packages/bus',
  'packages/machine',
  'packages/store',
  'packages/store-sqlite',
  'packages/store-postgres',
  'packages/runtime',
  'packages/mcp',
  'apps/server',
];

/** Taken from this tree as it is: the inspector's page is no part of what processes say. */
const FROM_HERE = new Set(['@baton/inspector']);

export interface EarlierVersion {
  commit: string;
  /** The built server (`baton serve`) and command (`baton worker`) of that version. */
  main: string;
  cli: string;
  /** That version's tools of the deployment tests (they load its own `@baton/contracts`). */
  tools: string;
  remove(): void;
}

function git(...args: string[]): string {
  return execFileSync('git', args, { cwd: ROOT, encoding: 'utf8' }).trim();
}

/** The names of the files of `dir` in `commit`'s tree. */
export function filesAt(commit: string, dir: string): string[] {
  return git('ls-tree', '--name-only', `${commit}:${dir}`).split('\n').filter(Boolean);
}

/** The workspaces of a tree, by package name. */
function workspacesOf(root: string): Map<string, string> {
  const found = new Map<string, string>();
  for (const parent of ['packages', 'apps']) {
    for (const name of readdirSync(join(root, parent))) {
      const manifest = join(root, parent, name, 'package.json');
      if (existsSync(manifest))
        found.set(JSON.parse(readFileSync(manifest, 'utf8')).name, join(root, parent, name));
    }
  }
  for (const name of ['test-support', 'test']) {
    const manifest = join(root, name, 'package.json');
    if (existsSync(manifest)) found.set(JSON.parse(readFileSync(manifest, 'utf8')).name, join(root, name));
  }
  return found;
}

/** Unpacks `commit` and builds what its server needs; throws with git's or tsup's words if it cannot. */
export function earlierVersion(commit: string): EarlierVersion {
  if (git('rev-parse', '--is-shallow-repository') === 'true') {
    throw new Error(`the upgrade test needs this repository's history (${commit}): this clone is shallow`);
  }
  const full = git('rev-parse', commit);
  const dir = mkdtempSync(join(tmpdir(), `baton-${full.slice(0, 7)}-`));
  try {
    execFileSync('sh', ['-c', `git archive --format=tar "$0" | tar -x -C "$1"`, full, dir], { cwd: ROOT });
    // This tree's installed packages, but for the workspaces: those are the earlier version's own.
    const modules = join(dir, 'node_modules');
    mkdirSync(join(modules, '@baton'), { recursive: true });
    for (const entry of readdirSync(join(ROOT, 'node_modules'))) {
      if (entry !== '@baton') symlinkSync(join(ROOT, 'node_modules', entry), join(modules, entry));
    }
    const here = workspacesOf(ROOT);
    for (const [name, path] of workspacesOf(dir)) {
      const linked = FROM_HERE.has(name) ? (here.get(name) ?? path) : path;
      symlinkSync(linked, join(modules, name));
      // A workspace's own installed packages (versions apart from the root's), where it has them.
      const relative = path.slice(dir.length + 1);
      const own = join(ROOT, relative, 'node_modules');
      if (existsSync(own) && !existsSync(join(path, 'node_modules')))
        symlinkSync(own, join(path, 'node_modules'));
    }
    for (const workspace of BUILT) {
      execFileSync(
        process.execPath,
        ['-e', "import('tsup').then(({ build }) => build({ dts: false, silent: true }))"],
        {
          cwd: join(dir, workspace),
          stdio: ['ignore', 'ignore', 'inherit'],
        },
      );
    }
  } catch (error) {
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
  return {
    commit: full,
    main: join(dir, 'apps', 'server', 'dist', 'main.js'),
    cli: join(dir, 'apps', 'server', 'dist', 'cli.js'),
    tools: join(dir, 'test', 'distributed', 'deployment-tools.mjs'),
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}
