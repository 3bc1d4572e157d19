import { describeStoreConformance } from '@baton/store/testing';
import { afterAll, beforeAll } from 'vitest';
import { postgresStore } from '../src/index.js';
import { type ThrowawayPostgres, throwawayPostgres } from '../src/testing.js';

let server: ThrowawayPostgres;
let opened = 0;
beforeAll(async () => {
  server = await throwawayPostgres();
}, 60_000);
afterAll(() => server.stop());

// A fresh schema for each test: a fresh, empty store on the same server.
describeStoreConformance('postgres', () =>
  postgresStore({ connectionString: server.url, schema: `conformance_${process.pid}_${opened++}` }),
);
