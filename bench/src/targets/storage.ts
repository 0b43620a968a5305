/**
 * What a target holds, in bytes (cost-curve: before the first hand-over and after the last
 * delivery), under the names the records use:
 *
 *   database       the store's whole size (SQLite: its pages, WAL included; Postgres:
 *                  `pg_database_size` of the run's database)
 *   <table>        a table with its indexes (and TOAST): destinations, events, deliveries,
 *                  attempts
 *   redisUsedMemory  redis-server's `used_memory` (INFO memory), every database and key on
 *                  the server: the bench session's own server holds only the run's keys
 */

import { DatabaseSync } from 'node:sqlite';
import { mastersOf, type RedisClient } from '@sluice/redis';
import pg from 'pg';

const TABLES = ['destinations', 'events', 'deliveries', 'attempts'];

/**
 * A SQLite file's logical size and its tables', read through a read-only connection of
 * our own (the WAL's pages included; `dbstat` counts every page of every b-tree).
 */
export function sqliteStorage(file: string): Record<string, number> {
  const db = new DatabaseSync(file, { readOnly: true });
  try {
    const out: Record<string, number> = {};
    const page = db.prepare('PRAGMA page_size').get() as { page_size: number };
    const count = db.prepare('PRAGMA page_count').get() as { page_count: number };
    out.database = page.page_size * count.page_count;
    const rows = db
      .prepare(
        `SELECT s.tbl_name AS tbl, SUM(d.pgsize) AS bytes FROM dbstat d
         JOIN sqlite_schema s ON s.name = d.name GROUP BY s.tbl_name`,
      )
      .all() as { tbl: string; bytes: number }[];
    for (const r of rows) if (TABLES.includes(r.tbl)) out[r.tbl] = r.bytes;
    return out;
  } finally {
    db.close();
  }
}

/** The run's Postgres database's size and its tables', over a connection to it. */
export async function postgresStorage(databaseUrl: string): Promise<Record<string, number>> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const { rows } = await client.query<{ name: string; bytes: string }>(
      `SELECT 'database' AS name, pg_database_size(current_database()) AS bytes
       UNION ALL
       SELECT t, pg_total_relation_size(t::regclass) FROM unnest($1::text[]) AS t`,
      [TABLES],
    );
    return Object.fromEntries(rows.map((r) => [r.name, Number(r.bytes)]));
  } finally {
    await client.end();
  }
}

/** redis-server's `used_memory`. */
/** used_memory of the server, or summed over a cluster's masters. */
export async function redisUsedMemory(redis: RedisClient): Promise<number> {
  let sum = 0;
  for (const node of mastersOf(redis))
    sum += Number(/used_memory:(\d+)/.exec(await node.info('memory'))?.[1]);
  return sum;
}
