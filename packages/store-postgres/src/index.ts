export { ensureDatabase } from './database.ts';
export { type MigrateOptions, migrate } from './migrate.ts';
export { PostgresStore, type PostgresStoreOptions } from './postgres-store.ts';
