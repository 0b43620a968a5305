import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { newId, newKeyring } from '@sluice/core';
import type { ClaimedDelivery, CompletedAttempt, NewTenant } from '@sluice/store';
import { newDestination, storeConformance } from '@sluice/store/conformance';
import {
  adminQuery,
  dropSchema,
  findPlanNode as find,
  freshSchema,
  newEvent,
  type PlanNode,
  TEST_DATABASE_URL,
  withPostgres,
} from '@sluice/testing';
import pg from 'pg';
import { PENDING_DESTINATIONS } from './lifecycle.ts';
import { PostgresStore } from './postgres-store.ts';

const keyring = newKeyring();

const T0 = 1_700_000_000_000;

/**
 * Postgres's own full disk, on this store's schema: every insert into the tables an event and
 * the readiness probe write fails with SQLSTATE 53100 `disk_full`, raised by the server (a
 * trigger) and carried by the driver as a full disk's "could not extend file" is.
 */
async function fillDisk(store: PostgresStore): Promise<() => Promise<void>> {
  await store.db.query(`CREATE FUNCTION disk_full() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN RAISE EXCEPTION 'could not extend file: No space left on device' USING ERRCODE = 'disk_full'; END $$`);
  for (const table of ['events', 'write_probe'])
    await store.db.query(`CREATE TRIGGER disk_full BEFORE INSERT ON ${table} EXECUTE FUNCTION disk_full()`);
  return async () => {
    await store.db.query('DROP FUNCTION disk_full() CASCADE');
  };
}

await withPostgres(() => {
  storeConformance('PostgresStore', async () => {
    const schema = freshSchema();
    const store = await PostgresStore.open(TEST_DATABASE_URL, { keyring, schema, poolSize: 4 });
    return {
      store,
      cleanup: async () => {
        await store.close(); // a second close is a no-op
        await dropSchema(schema);
      },
      rawSecrets: async (id) =>
        (await store.db.query('SELECT secrets::text AS s FROM destinations WHERE id = $1', [id]))[0]
          ?.s as string,
      rawAuth: async (id) =>
        (await store.db.query('SELECT auth::text AS a FROM destinations WHERE id = $1', [id]))[0]?.a as
          | string
          | null,
      fillDisk: () => fillDisk(store),
    };
  });

  describe('PostgresStore on Postgres', () => {
    let schema: string;
    let opened: PostgresStore[];
    let tenant: NewTenant;

    /** A store on this test's schema: its own pool, as another replica would have. */
    const open = async (): Promise<PostgresStore> => {
      const store = await PostgresStore.open(TEST_DATABASE_URL, { keyring, schema, poolSize: 5 });
      opened.push(store);
      return store;
    };

    beforeEach(async () => {
      schema = freshSchema();
      opened = [];
      tenant = { id: newId('ten'), name: 'Acme', createdAt: T0 };
      await (await open()).createTenant(tenant, 'hash');
    });
    afterEach(async () => {
      for (const store of opened) await store.close();
      await dropSchema(schema);
    });

    it('opens poolMin connections before it returns, each with the schema and its name, and keeps them', async () => {
      const applicationName = `sluice-test-${schema}`;
      const store = await PostgresStore.open(TEST_DATABASE_URL, {
        keyring,
        schema,
        poolSize: 5,
        poolMin: 2,
        applicationName,
      });
      opened.push(store);
      assert.equal(store.db.pool.totalCount, 2, 'opened at start');
      assert.equal(store.db.pool.idleCount, 2, 'and given back');
      const { rows } = await adminQuery(
        'SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = $1',
        [applicationName],
      );
      assert.equal(rows[0]?.n, 2, 'two server processes, named for pg_stat_activity');
      const paths = await Promise.all([1, 2].map(() => store.db.query('SHOW search_path')));
      assert.deepEqual(
        paths.map(([r]) => r?.search_path),
        [schema, schema],
      );
      assert.equal(store.db.pool.totalCount, 2, 'two queries at once ran on the kept connections');
      assert.equal(store.db.pool.options.min, 2, 'pg closes idle connections above min only');
    });

    it('claims on connections that run their generic plan, never planning a claim anew', async () => {
      const store = await PostgresStore.open(TEST_DATABASE_URL, {
        keyring,
        schema,
        poolSize: 5,
        genericPoolMin: 1,
      });
      opened.push(store);
      assert.equal(store.db.genericPool.totalCount, 1, 'the kept connection, opened at start');
      const destination = await store.createDestination(newDestination(tenant.id), T0);
      await store.acceptEvents(
        tenant.id,
        Array.from({ length: 8 }, (_, i) => newEvent([destination.id], null, i)),
        T0,
      );
      // One at a time, so every claim runs on the one kept connection; more than the five
      // custom plans Postgres makes before it would weigh a generic one.
      for (let i = 0; i < 8; i++)
        assert.equal((await store.claimDue(destination.id, 1, T0 + 1)).deliveries.length, 1);
      assert.equal(store.db.genericPool.totalCount, 1);
      const rows = await store.db.generic.query(
        `SELECT generic_plans, custom_plans, current_setting('plan_cache_mode') AS mode
         FROM pg_prepared_statements WHERE statement LIKE '%FOR UPDATE SKIP LOCKED%'`,
      );
      assert.deepEqual(rows, [{ generic_plans: 8, custom_plans: 0, mode: 'force_generic_plan' }]);
      const [main] = await store.db.query(`SELECT current_setting('plan_cache_mode') AS mode`);
      assert.equal(main?.mode, 'auto', 'every other statement is planned as Postgres sees fit');
    });

    it('puts every table in its schema', async () => {
      const { rows } = await adminQuery(
        `SELECT table_name FROM information_schema.tables WHERE table_schema = $1 ORDER BY table_name`,
        [schema],
      );
      assert.deepEqual(
        rows.map((r) => r.table_name),
        [
          'attempts',
          'backlog_alerts',
          'deliveries',
          'destination_health_transitions',
          'destinations',
          'event_types',
          'events',
          'portal_links',
          'rate_limit_changes',
          'schema_migrations',
          'tenant_keys',
          'tenants',
          'write_probe',
        ],
      );
    });

    it("parses BIGINT to numbers in its own pool only; pg's global parsers are unchanged", async () => {
      const [store] = opened as [PostgresStore];
      assert.deepEqual(await store.db.query('SELECT 9007199254740991::int8 AS n'), [{ n: 9007199254740991 }]);
      await assert.rejects(store.db.query('SELECT 9007199254740992::int8 AS n'), RangeError);
      const other = new pg.Pool({ connectionString: TEST_DATABASE_URL, max: 1 });
      try {
        assert.deepEqual((await other.query('SELECT 5::int8 AS n')).rows, [{ n: '5' }]);
      } finally {
        await other.end();
      }
    });

    it('refuses a schema name that is not a plain lowercase identifier', () => {
      for (const bad of ['Public', 'a-b', 'x; DROP TABLE tenants', '', '1abc']) {
        assert.throws(() => new PostgresStore(TEST_DATABASE_URL, { keyring, schema: bad }), /schema must be/);
      }
    });

    it('two stores claiming from one destination in parallel never claim a delivery twice', async () => {
      const [a] = opened as [PostgresStore];
      const b = await open();
      const destination = await a.createDestination(newDestination(tenant.id), T0);
      const total = 300;
      const events = Array.from({ length: total }, (_, i) => newEvent([destination.id], null, i));
      await a.acceptEvents(tenant.id, events, T0);

      // Four claim loops per store, each taking a few at a time until nothing is due.
      const loop = async (store: PostgresStore): Promise<ClaimedDelivery[]> => {
        const mine: ClaimedDelivery[] = [];
        for (;;) {
          const claimed = (await store.claimDue(destination.id, 7, T0 + 1)).deliveries;
          if (claimed.length === 0) return mine;
          mine.push(...claimed);
        }
      };
      const results = await Promise.all([a, a, a, a, b, b, b, b].map(loop));
      const ids = results.flat().map((c) => c.id);
      assert.equal(ids.length, total, 'every delivery claimed');
      assert.equal(new Set(ids).size, total, 'none claimed twice');
      assert.ok(
        results.filter((r) => r.length > 0).length > 1,
        'the claims really ran side by side (more than one loop got work)',
      );
      for (const mine of results) {
        const order = mine.map((c) => Number(JSON.parse(c.payload).n));
        assert.deepEqual(
          order,
          [...order].sort((x, y) => x - y),
          'each loop claims oldest first',
        );
      }
      assert.deepEqual(await a.destinationWork(destination.id), { nextPendingAt: null, inQueue: total });
    });

    it('20 concurrent batches with one idempotency key create one event and all answer with it', async () => {
      const [a] = opened as [PostgresStore];
      const b = await open();
      const one = await a.createDestination(newDestination(tenant.id), T0);
      const two = await a.createDestination(newDestination(tenant.id), T0);
      const results = await Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          (i % 2 === 0 ? a : b).acceptEvents(tenant.id, [newEvent([one.id, two.id], 'order-1', i)], T0 + i),
        ),
      );
      const answers = results.map((r) => r[0] ?? assert.fail('no answer'));
      assert.equal(answers.filter((r) => !r.replayed).length, 1, 'exactly one created it');
      const first = answers.find((r) => !r.replayed)?.event;
      for (const answer of answers) assert.deepEqual(answer.event, first, 'identical answers');
      assert.deepEqual(
        first?.deliveries.map((d) => d.destinationId),
        [one.id, two.id],
      );
      const counts = await adminQuery(
        `SELECT (SELECT count(*) FROM ${schema}.events)::int AS events,
                (SELECT count(*) FROM ${schema}.deliveries)::int AS deliveries`,
      );
      assert.deepEqual(counts.rows, [{ events: 1, deliveries: 2 }]);
    });

    it('concurrent batches sharing several keys in different orders neither deadlock nor duplicate', async () => {
      const [a] = opened as [PostgresStore];
      const b = await open();
      const destination = await a.createDestination(newDestination(tenant.id), T0);
      const keys = ['k1', 'k2', 'k3', 'k4'];
      const results = await Promise.all(
        Array.from({ length: 12 }, (_, i) => {
          const order = i % 2 === 0 ? keys : [...keys].reverse();
          const batch = order.map((key) => newEvent([destination.id], key, i));
          return (i % 3 === 0 ? b : a).acceptEvents(tenant.id, batch, T0);
        }),
      );
      const eventOf = new Map<string, string>();
      for (const [i, batch] of results.entries()) {
        const order = i % 2 === 0 ? keys : [...keys].reverse();
        for (const [j, answer] of batch.entries()) {
          const key = order[j] as string;
          const seen = eventOf.get(key);
          if (seen === undefined) eventOf.set(key, answer.event.id);
          else assert.equal(answer.event.id, seen, `one event for ${key}`);
        }
      }
      assert.equal(new Set(eventOf.values()).size, keys.length);
      assert.equal((await a.claimDue(destination.id, 100, T0)).deliveries.length, keys.length);
    });

    it('a completion batch written twice (a lost commit answer, then a retry) changes nothing more', async () => {
      const [store] = opened as [PostgresStore];
      const destination = await store.createDestination(newDestination(tenant.id), T0);
      await store.acceptEvents(tenant.id, [newEvent([destination.id]), newEvent([destination.id])], T0);
      const claimed = (await store.claimDue(destination.id, 2, T0)).deliveries;
      const batch: CompletedAttempt[] = claimed.map((c, i) => ({
        attempt: {
          id: newId('att'),
          deliveryId: c.id,
          destinationId: destination.id,
          attempt: 1,
          startedAt: T0 + 1,
          finishedAt: T0 + 2,
          statusCode: i === 0 ? 200 : 500,
          errorCode: null,
          errorMessage: null,
          responseExcerpt: i === 0 ? 'ok' : 'bad\u0000byte',
        },
        status: i === 0 ? 'delivered' : 'pending',
        nextAttemptAt: i === 0 ? null : T0 + 1_000,
        disableDestination: false,
      }));
      await store.completeAttempts(batch, T0 + 3);
      await store.completeAttempts(batch, T0 + 4);
      const [ok, retry] = await Promise.all(claimed.map((c) => store.getDelivery(c.id)));
      assert.equal(ok?.delivery.status, 'delivered');
      assert.equal(ok?.attempts.length, 1);
      assert.equal(retry?.delivery.status, 'pending');
      assert.equal(retry?.delivery.updatedAt, T0 + 3);
      assert.deepEqual(
        retry?.attempts.map((x) => x.responseExcerpt),
        ['bad\uFFFDbyte'],
        'a NUL from a receiver cannot fail the batch',
      );
    });

    it('the sweep looks each pending destination up by its key, even before statistics exist', async () => {
      const [store] = opened as [PostgresStore];
      await store.createDestination(newDestination(tenant.id), T0);
      // 3,000 more copies of it, never analyzed: what a sweep met right after a bulk create.
      await store.db.query(
        `INSERT INTO destinations SELECT (jsonb_populate_record(d, jsonb_build_object('id', d.id || '_' || i))).*
         FROM destinations d, generate_series(1, 3000) i`,
      );
      const ids = (await store.db.query('SELECT id FROM destinations')).map((r) => r.id as string);
      await store.acceptEvents(tenant.id, [newEvent(ids)], T0);
      const [row] = await store.db.query(`EXPLAIN (ANALYZE, FORMAT JSON) ${PENDING_DESTINATIONS}`);
      assert.ok(row, 'EXPLAIN answered');
      const plan = (row['QUERY PLAN'] as [{ Plan: PlanNode }])[0].Plan;
      const lookup = find(plan, (n) => n['Index Name'] === 'destinations_pkey');
      assert.ok(lookup, `destinations read by key: ${JSON.stringify(plan)}`);
      const filtered = find(plan, (n) => Number(n['Rows Removed by Join Filter'] ?? 0) > 0);
      assert.equal(filtered, undefined, 'no join compares every pending destination with every destination');
      assert.equal((await store.pendingDestinations()).length, ids.length);
    });
  });
});
