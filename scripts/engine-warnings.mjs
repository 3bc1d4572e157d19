// The Node versions, honestly: packs every published package, installs the tarballs (with the
// frameworks they ask for as peers) into a fresh project with the Node that runs this script, and
// prints each package npm warns needs another Node (EBADENGINE), as JSON; with what the bridges'
// examples (`examples/*-idle-turn.mjs`) print when run there, on the packed packages alone.
//
//   node scripts/engine-warnings.mjs            # this Node
//   PATH=<node 24>/bin:$PATH node scripts/engine-warnings.mjs
import { spawnSync } from 'node:child_process';
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

const root = join(import.meta.dirname, '..');

/** The workspaces that are published. */
export function publishedPackages() {
  return ['packages', 'apps'].flatMap((parent) =>
    readdirSync(join(root, parent))
      .map((name) => JSON.parse(readFileSync(join(root, parent, name, 'package.json'), 'utf8')))
      .filter((manifest) => !manifest.private)
      .map((manifest) => manifest.name),
  );
}

/** The package names of npm's EBADENGINE warnings in an install's output. */
export function engineWarnings(output) {
  const names = [...output.matchAll(/EBADENGINE\s+package: '(.+?)@[^@']+'/g)].map((match) => match[1]);
  return [...new Set(names)].sort();
}

/** The packages the examples import by name (`node:` modules aside). */
function examplesImports(files) {
  const names = new Set();
  for (const file of files) {
    const text = readFileSync(join(root, 'examples', file), 'utf8');
    for (const [, specifier] of text.matchAll(/from '([^'.][^']*)'/g)) {
      if (specifier.startsWith('node:')) continue;
      const parts = specifier.split('/');
      names.add(specifier.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0]);
    }
  }
  return [...names].sort();
}

/** The version of a package this repository installed. */
function repositoryVersion(name) {
  return JSON.parse(readFileSync(join(root, 'node_modules', name, 'package.json'), 'utf8')).version;
}

function run(command, args, cwd) {
  const done = spawnSync(command, args, { cwd, encoding: 'utf8' });
  if (done.status !== 0)
    throw new Error(`${command} ${args.join(' ')} failed:\n${done.stdout}${done.stderr}`);
  return `${done.stdout}${done.stderr}`;
}

export function installWarnings() {
  const dir = mkdtempSync(join(tmpdir(), 'baton-engines-'));
  try {
    const packs = join(dir, 'packs');
    mkdirSync(packs);
    const published = publishedPackages();
    run(
      'npm',
      [
        'pack',
        '--silent',
        '--pack-destination',
        packs,
        ...published.flatMap((name) => ['--workspace', name]),
      ],
      root,
    );
    const project = join(dir, 'project');
    mkdirSync(project);
    writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'fresh-project', version: '1.0.0' }));
    const tarballs = readdirSync(packs).map((file) => join(packs, file));
    // Native modules are built against the headers of the Node that installs them.
    const nodedir = dirname(dirname(process.execPath));
    const output = run(
      'npm',
      ['install', '--no-audit', '--no-fund', `--nodedir=${nodedir}`, ...tarballs],
      project,
    );
    const exampleFiles = readdirSync(join(root, 'examples')).filter((name) =>
      name.endsWith('-idle-turn.mjs'),
    );
    // What an example imports beside the packages and their peers (a front end's own SDK, such as
    // AG-UI's client), at the version this repository tests with, as its README says to install.
    const missing = examplesImports(exampleFiles).filter(
      (name) => !existsSync(join(project, 'node_modules', name, 'package.json')),
    );
    if (missing.length > 0)
      run(
        'npm',
        [
          'install',
          '--no-audit',
          '--no-fund',
          ...missing.map((name) => `${name}@${repositoryVersion(name)}`),
        ],
        project,
      );
    const examples = {};
    for (const file of exampleFiles) {
      copyFileSync(join(root, 'examples', file), join(project, file));
      examples[file] = run(process.execPath, [file], project);
    }
    return {
      node: process.versions.node,
      packages: published.length,
      warnings: engineWarnings(output),
      examples,
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  console.log(JSON.stringify(installWarnings()));
}
