#!/usr/bin/env node
/** The `baton` command (see command.ts). */
import { runBaton } from './command.js';

const code = await runBaton(process.argv.slice(2));
if (code !== undefined) process.exit(code);
