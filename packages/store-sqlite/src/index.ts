export { migrate } from './migrate.ts';
export { SqliteStore, type SqliteStoreOptions, type Synchronous } from './sqlite-store.ts';
