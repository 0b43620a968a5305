/**
 * The connection pool of one store, and its transactions (node-postgres as its authors
 * intend: one `Pool`, parameterized queries, a client checked out for each transaction).
 *
 * Two things are set per pool, never globally, so other pools in the process keep pg's
 * defaults: BIGINT (int8) parses to a number (every time is int8 milliseconds, and `count(*)`
 * is int8), and a `schema` becomes the `search_path` of every connection, given at connection
 * start-up (`options`) so no extra round trip and no connection ever runs without it.
 */

import { createHash } from 'node:crypto';
import pg from 'pg';

export type Row = Record<string, unknown>;

export interface Queryable {
  query(text: string, values?: unknown[]): Promise<Row[]>;
}

export interface DbOptions {
  /** Every table lives in this schema (a lowercase identifier); default: the server's search_path. */
  schema?: string | undefined;
  /** Most connections the pool opens; default 10. */
  poolSize?: number | undefined;
  /**
   * Connections the pool keeps open however idle it is, opened by `warm()`; default 0 (pg's
   * own: every connection idle for 10 s is closed).
   */
  poolMin?: number | undefined;
  /** Shown in `pg_stat_activity.application_name`: which service holds a connection. */
  applicationName?: string | undefined;
  /**
   * Connections of the generic-plan pool (`Db.generic`) kept open, opened by `warm()`;
   * default 0: it opens them on first use. The rate limiter, whose ticks claim, keeps some.
   */
  genericPoolMin?: number | undefined;
}

/** Most connections of the generic-plan pool: the claims of one turn share one statement. */
const GENERIC_POOL_SIZE = 3;

const SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,62}$/;
const INT8_OID = 20;

export function checkSchemaName(schema: string): string {
  if (!SCHEMA_NAME.test(schema)) {
    throw new Error(
      `schema must be a lowercase SQL identifier (${SCHEMA_NAME.source}), got ${JSON.stringify(schema)}`,
    );
  }
  return schema;
}

/** int8 as a number; a value past 2^53 would lose digits, so it fails loudly instead. */
function parseInt8(text: string): number {
  const n = Number(text);
  if (!Number.isSafeInteger(n)) throw new RangeError(`int8 ${text} is not a safe JavaScript integer`);
  return n;
}

// pg-types declares getTypeParser as an overloaded generic; this one keeps its contract.
const types: pg.CustomTypesConfig = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
    oid === INT8_OID && format !== 'binary'
      ? parseInt8
      : pg.types.getTypeParser(oid, format)) as pg.CustomTypesConfig['getTypeParser'],
};

/**
 * A parameterized statement as a named one: pg prepares it once per connection, and every
 * later run skips the parse and the plan (the claim's CTE and the batched ingest are most of
 * the store's work, run thousands of times a second). A statement without values (a
 * migration file of several statements) goes as a simple query.
 */
const names = new Map<string, string>();

function statement(text: string, values: unknown[] | undefined): pg.QueryConfig {
  if (values === undefined) return { text };
  let name = names.get(text);
  if (name === undefined) {
    name = `sluice_${createHash('sha1').update(text).digest('hex').slice(0, 20)}`;
    names.set(text, name);
  }
  return { name, text, values };
}

/** Sees the error of every statement and transaction that failed (the store's `DiskFull`). */
type Observe = (err: unknown) => void;

/** A statement's rows, run on any connection of `pool`. */
async function queryOn(
  pool: pg.Pool,
  text: string,
  values: unknown[] | undefined,
  observe: Observe,
): Promise<Row[]> {
  try {
    return (await pool.query<Row>(statement(text, values))).rows;
  } catch (err) {
    observe(err);
    throw err;
  }
}

export class Db implements Queryable {
  readonly pool: pg.Pool;
  /**
   * Connections whose prepared statements always run on their generic plan
   * (`plan_cache_mode = force_generic_plan`), for statements shaped so that no estimate
   * changes their cost (the claim, claim.ts; the completion, complete.ts). Postgres otherwise
   * plans such a statement anew at every run while a plan for the values at hand is
   * estimated cheaper than the generic one — for the claim, always, and its planning costs
   * more than running it — or settles on a generic plan made on the tables as they were at its
   * sixth run.
   */
  readonly genericPool: pg.Pool;
  /** Runs statements on `genericPool`. */
  readonly generic: Queryable;
  private ended = false;
  readonly #observe: Observe;

  /** `observe` sees the error of every statement and transaction that fails. */
  constructor(url: string, options: DbOptions = {}, observe: Observe = () => {}) {
    this.#observe = observe;
    const schema = options.schema === undefined ? undefined : checkSchemaName(options.schema);
    const settings = (more: string[]): { options?: string } => {
      const all = [...(schema === undefined ? [] : [`-c search_path=${schema}`]), ...more];
      return all.length === 0 ? {} : { options: all.join(' ') };
    };
    const common = {
      connectionString: url,
      ...(options.applicationName === undefined ? {} : { application_name: options.applicationName }),
      types,
    };
    this.pool = new pg.Pool({
      ...common,
      max: options.poolSize ?? 10,
      min: options.poolMin ?? 0,
      ...settings([]),
    });
    const genericMin = options.genericPoolMin ?? 0;
    this.genericPool = new pg.Pool({
      ...common,
      max: Math.max(GENERIC_POOL_SIZE, genericMin),
      min: genericMin,
      // A generic plan is made once per connection, often while the tables are nearly
      // empty, where a sequential scan is cheapest, and kept as they grow: these statements
      // read every row by a key, so a scan is never what they need.
      ...settings(['-c plan_cache_mode=force_generic_plan', '-c enable_seqscan=off']),
    });
    // An idle client whose connection breaks (a server restart) is already dropped by the
    // pool; without a listener the 'error' event would end the process. The next query
    // opens a new connection, and a query on a dead server fails on its own (readyz).
    this.pool.on('error', () => {});
    this.genericPool.on('error', () => {});
    const generic = this.genericPool;
    this.generic = { query: (text, values) => queryOn(generic, text, values, observe) };
  }

  query(text: string, values?: unknown[]): Promise<Row[]> {
    return queryOn(this.pool, text, values, this.#observe);
  }

  /**
   * Runs `fn` in `BEGIN … COMMIT` on one checked-out client (of the generic-plan pool with
   * `onGeneric`); `ROLLBACK` on error. A client
   * whose rollback failed is broken: it is destroyed rather than returned to the pool.
   */
  async tx<T>(fn: (q: Queryable) => Promise<T>, onGeneric = false): Promise<T> {
    const client = await (onGeneric ? this.genericPool : this.pool).connect();
    let broken: Error | undefined;
    const q: Queryable = {
      query: async (text, values) => (await client.query<Row>(statement(text, values))).rows,
    };
    try {
      await client.query('BEGIN');
      const result = await fn(q);
      await client.query('COMMIT');
      return result;
    } catch (err) {
      this.#observe(err);
      await client.query('ROLLBACK').catch((rollbackError: unknown) => {
        broken = rollbackError instanceof Error ? rollbackError : new Error(String(rollbackError));
      });
      throw err;
    } finally {
      client.release(broken);
    }
  }

  /**
   * Opens the pools' kept connections (`poolMin`, `genericPoolMin`) at once and runs `sql`
   * on each. A new connection is a new server process: its first statements load the
   * catalog (tables, indexes, types) and each connection prepares its own statements. Done
   * before a service says it is ready, that cost is not paid by the first requests, when
   * every process is cold at once; with `min`, pg keeps these connections through any lull.
   */
  async warm(sql: string): Promise<void> {
    const opened = await Promise.allSettled(
      [this.pool, this.genericPool].flatMap((pool) =>
        Array.from({ length: pool.options.min ?? 0 }, () => pool.connect()),
      ),
    );
    const clients = opened.flatMap((o) => (o.status === 'fulfilled' ? [o.value] : []));
    try {
      const failed = opened.find((o) => o.status === 'rejected');
      if (failed) throw failed.reason;
      await Promise.all(clients.map((c) => c.query(sql)));
    } finally {
      for (const c of clients) c.release();
    }
  }

  /** Ends the pool once; later queries reject. */
  async end(): Promise<void> {
    if (this.ended) return;
    this.ended = true;
    await Promise.all([this.pool.end(), this.genericPool.end()]);
  }
}
