/**
 * Numbered migrations (`migrations/0001_init.sql`, …), applied in order, each once, recorded
 * in `schema_migrations`.
 *
 * Two services starting at once never both migrate: the whole run is one transaction that
 * first takes a transaction-scoped advisory lock. The second runner waits on the lock, and
 * once the first commits (which releases it) sees the versions recorded and applies nothing.
 * A failed migration rolls back with everything before it in the run, and the lock goes with
 * the transaction, so a crashed runner never leaves it held.
 *
 * The lock key is fixed per schema: (MIGRATION_LOCK, hashtext(schema)). Each schema has its
 * own `schema_migrations`, so runners of different schemas (the tests') need not wait on each
 * other; a hash collision only makes them wait.
 *
 * Every migration runs inside that transaction, so none may use what a transaction refuses
 * (`CREATE INDEX CONCURRENTLY`); one that must would need a run of its own.
 */

import { readdir, readFile } from 'node:fs/promises';
import pg from 'pg';
import { checkSchemaName, type Db, type Queryable } from './db.ts';

const MIGRATIONS_DIR = new URL('../migrations/', import.meta.url);

/** The first key of the advisory lock: "sluice migrate", the same in every service. */
const MIGRATION_LOCK = 0x51_1c_e0;

export interface MigrateOptions {
  /** The schema the pool's search_path names; created if missing. Default: the current schema. */
  schema?: string | undefined;
  /** Where the numbered `.sql` files are; default this package's `migrations/`. */
  dir?: URL | undefined;
}

/** Applies the migrations not yet applied; returns their versions (none when up to date). */
export async function migrate(db: Db, options: MigrateOptions = {}): Promise<number[]> {
  const dir = options.dir ?? MIGRATIONS_DIR;
  const files = (await readdir(dir)).filter((f) => /^\d{4}_.+\.sql$/.test(f)).sort();
  const schema = options.schema === undefined ? undefined : checkSchemaName(options.schema);
  return underMigrationLock(db, schema, async (q) => {
    // Under the lock: CREATE … IF NOT EXISTS is not safe against a concurrent create.
    if (schema !== undefined) await q.query(`CREATE SCHEMA IF NOT EXISTS ${pg.escapeIdentifier(schema)}`);
    await q.query(
      'CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, applied_at BIGINT NOT NULL)',
    );
    const done = new Set(
      (await q.query('SELECT version FROM schema_migrations')).map((r) => r.version as number),
    );
    const applied: number[] = [];
    for (const file of files) {
      const version = Number(file.slice(0, 4));
      if (done.has(version)) continue;
      // A file of several statements goes as one simple query (no parameters allowed).
      await q.query(await readFile(new URL(file, dir), 'utf8'));
      await q.query('INSERT INTO schema_migrations (version, applied_at) VALUES ($1, $2)', [
        version,
        Date.now(),
      ]);
      applied.push(version);
    }
    return applied;
  });
}

/**
 * `fn` in one transaction holding the migration lock of `schema`: what runs once per start
 * after the migrations (sealing the signing secrets, seal.ts) takes it too.
 */
export function underMigrationLock<T>(
  db: Db,
  schema: string | undefined,
  fn: (q: Queryable) => Promise<T>,
): Promise<T> {
  return db.tx(async (q) => {
    await q.query("SELECT pg_advisory_xact_lock($1, hashtext(coalesce($2, current_schema(), '')))", [
      MIGRATION_LOCK,
      schema ?? null,
    ]);
    return fn(q);
  });
}
