import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { pathToFileURL } from 'node:url';
import { newId, newKeyring } from '@sluice/core';
import { adminQuery, dropSchema, freshSchema, TEST_DATABASE_URL, withPostgres } from '@sluice/testing';
import pg from 'pg';
import { ensureDatabase } from './database.ts';
import { Db } from './db.ts';
import { migrate } from './migrate.ts';
import { PostgresStore } from './postgres-store.ts';

const keyring = newKeyring();

const MIGRATION_VERSIONS = readdirSync(new URL('../migrations/', import.meta.url))
  .filter((f) => /^\d{4}_.+\.sql$/.test(f))
  .sort()
  .map((f) => Number(f.slice(0, 4)));

await withPostgres(() => {
  describe('migrate', () => {
    let schema: string;
    let dbs: Db[];
    let dirs: string[];

    /** A pool on this test's schema, as one starting service would have. */
    const connect = (): Db => {
      const db = new Db(TEST_DATABASE_URL, { schema, poolSize: 2 });
      dbs.push(db);
      return db;
    };

    /** A folder of migration files, `{ '0001_a.sql': '…' }`. */
    const migrations = (files: Record<string, string>): URL => {
      const dir = mkdtempSync(join(tmpdir(), 'sluice-migrations-'));
      dirs.push(dir);
      for (const [name, sql] of Object.entries(files)) writeFileSync(join(dir, name), sql);
      return pathToFileURL(`${dir}/`);
    };

    const recorded = async (): Promise<number[]> =>
      (await adminQuery(`SELECT version FROM ${schema}.schema_migrations ORDER BY version`)).rows.map(
        (r) => r.version as number,
      );

    beforeEach(() => {
      schema = freshSchema();
      dbs = [];
      dirs = [];
    });
    afterEach(async () => {
      for (const db of dbs) await db.end();
      for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
      await dropSchema(schema);
    });

    it('several migrators started at once on a fresh schema apply each migration exactly once', async () => {
      const runs = await Promise.all(Array.from({ length: 6 }, () => migrate(connect(), { schema })));
      assert.deepEqual(
        runs.flat().sort((a, b) => a - b),
        MIGRATION_VERSIONS,
        `applied: ${JSON.stringify(runs)}`,
      );
      assert.equal(runs.filter((r) => r.length > 0).length, 1, 'one runner applied them all');
      assert.deepEqual(await recorded(), MIGRATION_VERSIONS);
      assert.deepEqual(await migrate(connect(), { schema }), [], 'a later run applies nothing');
    });

    it('slow migrations run once each, in order, however many runners race', async () => {
      const dir = migrations({
        '0001_log.sql': `CREATE TABLE log (version INTEGER NOT NULL, at TIMESTAMPTZ NOT NULL DEFAULT clock_timestamp());
           SELECT pg_sleep(0.2);
           INSERT INTO log (version) VALUES (1);`,
        '0002_more.sql': 'SELECT pg_sleep(0.1); INSERT INTO log (version) VALUES (2);',
        '0003_last.sql': 'INSERT INTO log (version) VALUES (3);',
        'README.txt': 'not a migration',
      });
      const runs = await Promise.all(Array.from({ length: 5 }, () => migrate(connect(), { schema, dir })));
      assert.deepEqual(runs.flat(), [1, 2, 3]);
      const log = await adminQuery(`SELECT version FROM ${schema}.log ORDER BY at`);
      assert.deepEqual(
        log.rows.map((r) => r.version),
        [1, 2, 3],
      );
      assert.deepEqual(await recorded(), [1, 2, 3]);
    });

    it('a failing migration rolls back the whole run and releases the lock', async () => {
      const broken = migrations({
        '0001_ok.sql': 'CREATE TABLE first (id INTEGER);',
        '0002_bad.sql': 'CREATE TABLE second (id INTEGER); SELECT no_such_column FROM first;',
      });
      await assert.rejects(migrate(connect(), { schema, dir: broken }), /no_such_column/);
      const tables = await adminQuery(
        'SELECT table_name FROM information_schema.tables WHERE table_schema = $1',
        [schema],
      );
      assert.deepEqual(tables.rows, [], 'nothing of the run remains');
      const fixed = migrations({
        '0001_ok.sql': 'CREATE TABLE first (id INTEGER);',
        '0002_good.sql': 'CREATE TABLE second (id INTEGER);',
      });
      assert.deepEqual(await migrate(connect(), { schema, dir: fixed }), [1, 2], 'the lock was released');
    });

    it('stores opened at once on a schema that does not exist yet all work', async () => {
      const stores = await Promise.all(
        Array.from({ length: 4 }, () =>
          PostgresStore.open(TEST_DATABASE_URL, { keyring, schema, poolSize: 2 }),
        ),
      );
      try {
        const tenants = stores.map((_, i) => ({
          id: newId('ten'),
          name: `t${i}`,
          createdAt: i,
          quota: { eventsPerSecond: null, pendingEvents: null },
        }));
        await Promise.all(
          stores.map((s, i) => s.createTenant(tenants[i] as (typeof tenants)[number], `h${i}`)),
        );
        for (const t of tenants) assert.deepEqual(await stores[0]?.getTenant(t.id), t);
        assert.deepEqual(await recorded(), MIGRATION_VERSIONS);
      } finally {
        for (const s of stores) await s.close();
      }
    });

    it('0002 numbers the deliveries already there per destination, in insertion order', async () => {
      const real = new URL('../migrations/', import.meta.url);
      const first = migrations({ '0001_init.sql': readFileSync(new URL('0001_init.sql', real), 'utf8') });
      const db = connect();
      assert.deepEqual(await migrate(db, { schema, dir: first }), [1]);
      const [a, b] = [newId('dst'), newId('dst')];
      await db.query(
        `INSERT INTO tenants (id, name, api_key_hash, created_at) VALUES ('ten_1', 'acme', 'h', 0);
         INSERT INTO destinations (id, tenant_id, url, rate_limit, rate_period, event_types,
           retry_max_attempts, retry_initial_delay_ms, retry_max_delay_ms, timeout_ms, secrets, state,
           created_at, updated_at)
         SELECT id, 'ten_1', 'https://example.test', 10, 'second', '["*"]', 3, 0, 0, 1000, '[]', 'active', 0, 0
         FROM unnest(ARRAY['${a}', '${b}']) AS id;
         INSERT INTO deliveries (id, event_id, destination_id, tenant_id, status, next_attempt_at, created_at, updated_at)
         SELECT 'dlv_' || n, 'evt_' || n, d, 'ten_1', 'pending', 0, 0, 0
         FROM unnest(ARRAY['${a}', '${b}', '${a}', '${a}', '${b}']) WITH ORDINALITY AS u(d, n);`,
      );
      assert.deepEqual(await migrate(db, { schema }), MIGRATION_VERSIONS.slice(1));
      const rows = await db.query('SELECT destination_id, sequence FROM deliveries ORDER BY seq');
      assert.deepEqual(
        rows.map((r) => [r.destination_id, r.sequence]),
        [
          [a, 1],
          [b, 1],
          [a, 2],
          [a, 3],
          [b, 2],
        ],
      );
      const next = await db.query('SELECT id, next_sequence, ordering FROM destinations ORDER BY id');
      assert.deepEqual(
        next.map((r) => [r.id, r.next_sequence, r.ordering]),
        [
          [a, 4, 'none'],
          [b, 3, 'none'],
        ].sort((x, y) => ((x[0] as string) < (y[0] as string) ? -1 : 1)),
      );
    });

    it('0009 carries each tenant key over as its first key (not the system placeholder)', async () => {
      const real = new URL('../migrations/', import.meta.url);
      const files = Object.fromEntries(
        readdirSync(real)
          .filter((f) => /^\d{4}_.+\.sql$/.test(f) && Number(f.slice(0, 4)) < 9)
          .map((f) => [f, readFileSync(new URL(f, real), 'utf8')]),
      );
      const db = connect();
      await migrate(db, { schema, dir: migrations(files) });
      const acme = newId('ten');
      const system = newId('ten');
      await db.query(
        `INSERT INTO tenants (id, name, api_key_hash, created_at) VALUES ($1, 'acme', 'h1', 5), ($2, 'system', $3, 6)`,
        [acme, system, `none:${system}`],
      );
      assert.deepEqual(await migrate(db, { schema }), [9, ...MIGRATION_VERSIONS.filter((v) => v > 9)]);
      const keys = await db.query(
        'SELECT id, tenant_id, key_hash, prefix, created_at, last_used_at FROM tenant_keys',
      );
      assert.deepEqual(keys, [
        {
          id: `key_${acme.slice(4)}`,
          tenant_id: acme,
          key_hash: 'h1',
          prefix: null,
          created_at: 5,
          last_used_at: null,
        },
      ]);
    });
  });

  describe('ensureDatabase', () => {
    let name: string;

    beforeEach(() => {
      name = `sluice_${freshSchema()}`;
    });
    afterEach(async () => {
      const server = new URL(TEST_DATABASE_URL);
      server.pathname = '/postgres';
      const client = new pg.Client({ connectionString: server.href });
      await client.connect();
      try {
        await client.query(`DROP DATABASE IF EXISTS ${pg.escapeIdentifier(name)} WITH (FORCE)`);
      } finally {
        await client.end();
      }
    });

    const urlOf = (database: string): string => {
      const url = new URL(TEST_DATABASE_URL);
      url.pathname = `/${database}`;
      return url.href;
    };

    it('creates the database once, however many callers race, and then it is usable', async () => {
      const created = await Promise.all(Array.from({ length: 4 }, () => ensureDatabase(urlOf(name))));
      assert.equal(created.filter(Boolean).length, 1, `created: ${JSON.stringify(created)}`);
      assert.equal(await ensureDatabase(urlOf(name)), false, 'it exists now');
      const store = await PostgresStore.open(urlOf(name), { keyring });
      try {
        await store.ping();
      } finally {
        await store.close();
      }
    });

    it('refuses a URL without a database name', async () => {
      await assert.rejects(ensureDatabase(urlOf('')), /names no database/);
    });
  });
});
