/** `@baton/store-sqlite`: the embedded default store, on one SQLite file. */
export { MIGRATIONS } from './migrations.js';
export { SqliteStore, type SqliteStoreOptions, sqliteStore } from './sqlite-store.js';
export { storeFileProblem } from './store-file.js';
