import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

const root = join(import.meta.dirname, '..', '..');
const dir = mkdtempSync(join(tmpdir(), 'baton-versions-'));
afterAll(() => rm(dir, { recursive: true, force: true }));

type Manifest = { name: string; version: string; private?: boolean; dependencies?: Record<string, string> };
const read = (file: string): Manifest => JSON.parse(readFileSync(file, 'utf8'));

describe('versions, with changesets', () => {
  it('moves every published package to the same version, internal dependencies with them', () => {
    // The manifests and the pending changesets, without the rest of the repository.
    writeFileSync(join(dir, 'package.json'), readFileSync(join(root, 'package.json')));
    cpSync(join(root, '.changeset'), join(dir, '.changeset'), { recursive: true });
    // A fix to one package: the fixed group moves every published package with it.
    writeFileSync(join(dir, '.changeset', 'a-fix.md'), '---\n"@baton/contracts": patch\n---\n\nA fix.\n');
    const workspaces: string[] = [];
    for (const parent of ['packages', 'apps']) {
      for (const name of readdirSync(join(root, parent))) {
        mkdirSync(join(dir, parent, name), { recursive: true });
        writeFileSync(
          join(dir, parent, name, 'package.json'),
          readFileSync(join(root, parent, name, 'package.json')),
        );
        workspaces.push(join(dir, parent, name, 'package.json'));
      }
    }
    for (const name of ['test', 'bench']) {
      mkdirSync(join(dir, name));
      writeFileSync(join(dir, name, 'package.json'), readFileSync(join(root, name, 'package.json')));
    }
    const before = read(join(root, 'packages', 'contracts', 'package.json')).version;

    execFileSync(process.execPath, [join(root, 'node_modules', '@changesets', 'cli', 'bin.js'), 'version'], {
      cwd: dir,
      stdio: 'pipe',
    });

    const published = workspaces.map(read).filter((manifest) => !manifest.private);
    expect(published.length).toBeGreaterThanOrEqual(14);
    const [version] = new Set(published.map((manifest) => manifest.version));
    expect(new Set(published.map((manifest) => manifest.version)).size).toBe(1);
    expect(version).not.toBe(before);
    for (const manifest of published) {
      for (const [name, range] of Object.entries(manifest.dependencies ?? {})) {
        if (name.startsWith('@baton/'))
          expect(`${manifest.name} -> ${name}@${range}`).toBe(`${manifest.name} -> ${name}@${version}`);
      }
    }
  });
});
