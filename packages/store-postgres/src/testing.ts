/**
 * What this package's tests share: the test server, a fresh schema per test, and the rule for
 * a server that is not there — CI fails, a developer's machine skips loudly.
 */

import { randomBytes } from 'node:crypto';
import { it } from 'node:test';
import type { NewEvent } from '@sluice/store';
import pg from 'pg';
import { ensureDatabase } from './database.ts';

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

/** A destination as the tests create it: the store conformance suite's. */
export { newDestination } from '@sluice/store/conformance';

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

/** Why the test server cannot be used, or undefined when it can (its database then exists). */
async function unreachable(): Promise<string | undefined> {
  const server = new URL(TEST_DATABASE_URL);
  server.pathname = '/postgres';
  const probe = new pg.Client({ connectionString: server.href, connectionTimeoutMillis: 3_000 });
  try {
    await probe.connect();
    await probe.query('SELECT 1');
  } catch (err) {
    return err instanceof Error ? err.message : String(err);
  } finally {
    await probe.end().catch(() => {});
  }
  await ensureDatabase(TEST_DATABASE_URL);
  return undefined;
}

/**
 * Registers `tests` when the test server answers. Otherwise: with `CI` set, one failing
 * test (CI must run these); without, one skipped test and a warning nobody can miss.
 */
export async function withPostgres(name: string, tests: () => void): Promise<void> {
  const reason = await unreachable();
  if (reason === undefined) {
    tests();
    return;
  }
  const where = TEST_DATABASE_URL.replace(/\/\/[^@/]*@/, '//');
  const message = `PostgreSQL not reachable at ${where} (${reason}) — skipped; CI runs it`;
  if (process.env.CI) {
    it(name, () => {
      throw new Error(`PostgreSQL not reachable at ${where} (${reason}); CI must run these tests`);
    });
    return;
  }
  console.warn(`\n!!! ${name}: ${message}\n`);
  it(name, (t) => {
    t.skip(message);
  });
}
