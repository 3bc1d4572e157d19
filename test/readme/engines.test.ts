import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { FRAMEWORKS_NEEDING_22 } from './frameworks-needing-22.js';

const root = join(import.meta.dirname, '..', '..');

/** The bridges whose example is a conversation in which a result comes back while the user is idle. */
const BRIDGES_WITH_AN_IDLE_TURN = readdirSync(join(root, 'examples'))
  .filter((file) => file.endsWith('-idle-turn.mjs'))
  .map((file) => file.slice(0, -'-idle-turn.mjs'.length));

/** The workspaces a user installs: every package of `packages/` and `apps/` that is not private. */
const PUBLISHED = ['packages', 'apps'].flatMap((parent) =>
  readdirSync(join(root, parent)).filter(
    (name) =>
      !(JSON.parse(readFileSync(join(root, parent, name, 'package.json'), 'utf8')) as { private?: boolean })
        .private,
  ),
);

/** What each of those examples prints. */
const IDLE_TURN = [
  'user: When is high tide?',
  'assistant: I am looking it up; I will tell you when it is back.',
  '(a result came back while the user was idle: a turn of its own)',
  'assistant: The research is back: high tide at 12:40.',
  '',
].join('\n');

describe('the Node versions, honestly', () => {
  it("installs every published package from its tarball, with the frameworks they ask for, and npm warns of no engine but the frameworks that need Node 22; the bridges' examples run there", {
    timeout: 600_000,
  }, () => {
    const result = JSON.parse(
      execFileSync(process.execPath, [join(root, 'scripts', 'engine-warnings.mjs')], { encoding: 'utf8' }),
    ) as { node: string; packages: number; warnings: string[]; examples: Record<string, string> };
    expect(result.packages).toBe(PUBLISHED.length);
    const major = Number(process.versions.node.split('.')[0]);
    expect(result.warnings).toEqual(major < 22 ? FRAMEWORKS_NEEDING_22 : []);
    // In a project of their own, on the packed packages and the frameworks npm put beside them.
    expect(result.examples).toEqual(
      Object.fromEntries(BRIDGES_WITH_AN_IDLE_TURN.map((bridge) => [`${bridge}-idle-turn.mjs`, IDLE_TURN])),
    );
  });

  it('declares in every published package the Node versions the repository runs on', () => {
    const manifest = (file: string) =>
      JSON.parse(readFileSync(file, 'utf8')) as {
        name: string;
        private?: boolean;
        engines?: { node?: string };
      };
    const repository = manifest(join(root, 'package.json')).engines?.node;
    expect(repository).toBe('^20.19.0 || >=22.12.0');
    const published = ['packages', 'apps']
      .flatMap((parent) =>
        readdirSync(join(root, parent)).map((name) => join(root, parent, name, 'package.json')),
      )
      .map(manifest)
      .filter((each) => !each.private);
    expect(published).toHaveLength(25);
    for (const each of published)
      expect({ [each.name]: each.engines?.node }).toEqual({ [each.name]: repository });
  });
});
