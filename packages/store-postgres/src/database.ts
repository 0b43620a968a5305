/**
 * Creating the database a URL names, for a first start on an empty server (and the tests).
 * A database cannot create itself: this connects to the `postgres` maintenance database of
 * the same server, as the same user, and creates it there.
 */

import pg from 'pg';

/** Creates the URL's database unless it exists; returns whether this call created it. */
export async function ensureDatabase(url: string): Promise<boolean> {
  const target = new URL(url);
  const name = decodeURIComponent(target.pathname.replace(/^\//, ''));
  if (name === '') throw new Error(`the database URL names no database: ${target.origin}`);
  const maintenance = new URL(url);
  maintenance.pathname = '/postgres';
  const client = new pg.Client({ connectionString: maintenance.href });
  await client.connect();
  try {
    const found = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    if (found.rowCount !== 0) return false;
    try {
      await client.query(`CREATE DATABASE ${pg.escapeIdentifier(name)}`);
      return true;
    } catch (err) {
      // Another service created it between our look and our create: 42P04 duplicate_database,
      // or 23505 when both reached the catalog's unique index at once.
      const code = (err as { code?: unknown }).code;
      if (code === '42P04' || code === '23505') return false;
      throw err;
    }
  } finally {
    await client.end();
  }
}
