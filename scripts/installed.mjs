// The README's rows each run in a fresh clone: the first that needs the packages installs them
// (`npm ci`), once; in a clone already set up this does nothing.
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
if (!existsSync(`${root}node_modules/.bin/turbo`)) {
  process.stderr.write('Installing the packages first (npm ci), once for this clone\n');
  execFileSync('npm', ['ci', '--no-audit', '--no-fund'], {
    cwd: root,
    stdio: ['ignore', process.stderr, process.stderr],
  });
}
