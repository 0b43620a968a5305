/**
 * Numbered migrations (`migrations/0001_init.sql`, …), applied in order, each once, inside
 * `BEGIN IMMEDIATE` so two processes opening one file never both migrate: the second waits
 * for the write lock, then sees the migration recorded and skips it.
 */

import { readdirSync, readFileSync } from 'node:fs';
import type { DatabaseSync } from 'node:sqlite';

const MIGRATIONS_DIR = new URL('../migrations/', import.meta.url);

export function migrate(db: DatabaseSync): number[] {
  db.exec(
    'CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, applied_at INTEGER NOT NULL)',
  );
  const files = readdirSync(MIGRATIONS_DIR)
    .filter((f) => /^\d{4}_.+\.sql$/.test(f))
    .sort();
  const applied: number[] = [];
  for (const file of files) {
    const version = Number(file.slice(0, 4));
    db.exec('BEGIN IMMEDIATE');
    try {
      const done = db.prepare('SELECT 1 FROM schema_migrations WHERE version = ?').get(version);
      if (!done) {
        db.exec(readFileSync(new URL(file, MIGRATIONS_DIR), 'utf8'));
        db.prepare('INSERT INTO schema_migrations (version, applied_at) VALUES (?, ?)').run(
          version,
          Date.now(),
        );
        applied.push(version);
      }
      db.exec('COMMIT');
    } catch (err) {
      db.exec('ROLLBACK');
      throw err;
    }
  }
  return applied;
}
