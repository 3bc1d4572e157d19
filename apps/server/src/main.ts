/**
 * `npm start`: the reference server over the demo tools, on the embedded SQLite store unless told
 * of a PostgreSQL. `main.js --init` starts afresh where a store used to be; `main.js doctor` checks
 * the whole SQLite file and exits. The same as `baton serve` and `baton doctor`.
 */
import { runBaton } from './command.js';

const args = process.argv.slice(2);
const code = await runBaton(args[0] === 'doctor' ? args : ['serve', ...args]);
if (code !== undefined) process.exit(code);
