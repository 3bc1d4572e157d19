import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describeStoreConformance } from '@baton/store/testing';
import { afterAll } from 'vitest';
import { sqliteStore } from '../src/index.js';

const dir = mkdtempSync(join(tmpdir(), 'baton-sqlite-'));
let opened = 0;
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describeStoreConformance('sqlite (file, WAL)', () =>
  sqliteStore({ path: join(dir, `store-${opened++}.db`) }),
);
describeStoreConformance("sqlite (file, every change on the caller's thread)", () =>
  sqliteStore({ path: join(dir, `inline-${opened++}.db`), writerThread: false }),
);
describeStoreConformance('sqlite (synchronous full)', () =>
  sqliteStore({ path: join(dir, `full-${opened++}.db`), synchronous: 'full' }),
);
