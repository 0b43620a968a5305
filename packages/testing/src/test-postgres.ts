/**
 * The shared PostgreSQL the store's tests run on (`SLUICE_TEST_DATABASE_URL`, or the `test`
 * database on 127.0.0.1:5432), a fresh schema per test, and what they read of a query plan.
 * A test file that needs it awaits `requirePostgres()` (or registers its tests with
 * `withPostgres`) first: where no server answers, the file fails, saying how to start one.
 */

import { randomBytes } from 'node:crypto';
import type { NewEvent } from '@sluice/store';
import pg from 'pg';
import { ServerMissingError, START_POSTGRES, shownUrl } from './required.ts';

export const TEST_DATABASE_URL =
  process.env.SLUICE_TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

/** A schema name no other test uses. */
export function freshSchema(): string {
  return `t_${randomBytes(6).toString('hex')}`;
}

/** Runs one statement on its own short-lived connection (not a store's pool). */
export async function adminQuery(text: string, values?: unknown[]): Promise<pg.QueryResult> {
  const client = new pg.Client({ connectionString: TEST_DATABASE_URL });
  await client.connect();
  try {
    return await client.query(text, values);
  } finally {
    await client.end();
  }
}

/** A connection of its own (another transaction, a session setting) on `schema`. */
export async function schemaClient(schema: string): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: TEST_DATABASE_URL, options: `-c search_path=${schema}` });
  await client.connect();
  return client;
}

/**
 * `v` as an SQL literal, for `EXECUTE name(…)` of a prepared statement (EXECUTE takes no bind
 * parameters): NULL, an array (`{…}`, each element JSON-quoted), or text.
 */
export function sqlLiteral(client: Pick<pg.ClientBase, 'escapeLiteral'>, v: unknown): string {
  if (v === null) return 'NULL';
  if (Array.isArray(v))
    return client.escapeLiteral(`{${v.map((x) => (x === null ? 'NULL' : JSON.stringify(x))).join(',')}}`);
  return client.escapeLiteral(String(v));
}

export async function dropSchema(schema: string): Promise<void> {
  await adminQuery(`DROP SCHEMA IF EXISTS ${pg.escapeIdentifier(schema)} CASCADE`);
}

/** An event for these destinations; `n` goes into its payload. */
export function newEvent(destinationIds: string[], idempotencyKey: string | null = null, n = 0): NewEvent {
  return { type: 'order.created', payload: `{"n":${n}}`, idempotencyKey, destinationIds };
}

/** A node of an EXPLAIN (FORMAT JSON) tree. */
export interface PlanNode {
  'Node Type': string;
  'Index Name'?: string;
  'Relation Name'?: string;
  'Index Cond'?: string;
  'Shared Hit Blocks'?: number;
  'Rows Removed by Join Filter'?: number;
  'Actual Loops'?: number;
  Plans?: PlanNode[];
}

/** The first node of an EXPLAIN (FORMAT JSON) tree, depth first, that matches. */
export function findPlanNode(node: PlanNode, match: (n: PlanNode) => boolean): PlanNode | undefined {
  if (match(node)) return node;
  for (const child of node.Plans ?? []) {
    const found = findPlanNode(child, match);
    if (found) return found;
  }
  return undefined;
}

const probed = new Map<string, Promise<void>>();

/**
 * Resolves once the server of `url` answers, its database created if it had none; rejects
 * with a ServerMissingError naming the URL and how to start the server. Each URL is probed once.
 */
export function requirePostgres(url = TEST_DATABASE_URL): Promise<void> {
  let answered = probed.get(url);
  if (answered === undefined) {
    answered = (async () => {
      const maintenance = new URL(url);
      maintenance.pathname = '/postgres';
      const client = new pg.Client({ connectionString: maintenance.href, connectionTimeoutMillis: 3_000 });
      try {
        await client.connect();
      } catch (err) {
        await client.end().catch(() => {});
        const why = err instanceof Error ? err.message : String(err);
        throw new ServerMissingError(
          `PostgreSQL is required at ${shownUrl(url)} (SLUICE_TEST_DATABASE_URL) and did not answer (${why}). Start it: ${START_POSTGRES}`,
        );
      }
      try {
        await createDatabase(client, decodeURIComponent(new URL(url).pathname.slice(1)));
      } finally {
        await client.end();
      }
    })();
    probed.set(url, answered);
  }
  return answered;
}

/** Creates the database `name` unless it exists (another test file may be creating it too). */
async function createDatabase(client: pg.Client, name: string): Promise<void> {
  const found = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
  if (found.rowCount !== 0) return;
  try {
    await client.query(`CREATE DATABASE ${pg.escapeIdentifier(name)}`);
  } catch (err) {
    // Created by another between the look and the create: 42P04 duplicate_database, or 23505
    // when both reached the catalog's unique index at once.
    const code = (err as { code?: unknown }).code;
    if (code !== '42P04' && code !== '23505') throw err;
  }
}

/** Registers `tests` once the test server answers (`requirePostgres`); the file fails otherwise. */
export async function withPostgres(tests: () => void): Promise<void> {
  await requirePostgres();
  tests();
}
