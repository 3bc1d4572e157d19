/** `@baton/store-postgres`: the Baton store on PostgreSQL. The throw-away test server is in `./testing`. */
export { PostgresStore, type PostgresStoreOptions, postgresStore } from './postgres-store.js';
