#!/usr/bin/env node
// The `baton` command. npm links it at install, which in a fresh clone of the repository comes
// before any build: so this launcher is committed, loads the built command, and in the repository
// builds the server first when it is not built yet.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const cli = new URL('../dist/cli.js', import.meta.url);
if (!existsSync(cli)) {
  const root = fileURLToPath(new URL('../../../', import.meta.url));
  if (!existsSync(`${root}turbo.json`)) {
    process.stderr.write('baton: @baton/server is not built (dist/cli.js is missing): reinstall it\n');
    process.exit(1);
  }
  process.stderr.write('baton: building the server first (once, in a fresh clone)\n');
  const built = spawnSync(
    'npm',
    ['run', 'build', '--', '--filter=@baton/server...', '--output-logs=errors-only'],
    {
      cwd: root,
      stdio: ['ignore', process.stderr, process.stderr],
    },
  );
  if (built.status !== 0) {
    process.stderr.write(`baton: the build failed (npm run build exited ${built.status ?? built.signal})\n`);
    process.exit(1);
  }
}
await import(cli.href);
