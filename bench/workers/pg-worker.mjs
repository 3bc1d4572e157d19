// A worker process of the PostgreSQL measure: runs `add_one` calls that the bench's client submits.
// Prints `ready` once it takes work; stops on SIGTERM.
import { defineTool } from '@baton/contracts';
import { createRuntime } from '@baton/runtime';
import { postgresStore } from '@baton/store-postgres';
import { z } from 'zod';

const runtime = createRuntime({
  tools: [
    defineTool({
      name: 'add_one',
      description: 'adds one',
      input: z.object({ i: z.number() }),
      execute: async ({ i }) => i + 1,
    }),
  ],
  store: postgresStore({ connectionString: process.env.BATON_PG_URL, schema: process.env.BATON_PG_SCHEMA }),
  role: 'worker',
});
await runtime.ready;
process.stdout.write('ready\n');
process.once('SIGTERM', async () => {
  await runtime.close();
  process.exit(0);
});
