import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { newId, newKeyring } from '@sluice/core';
import type { ClaimedDelivery, CompletedAttempt, NewTenant } from '@sluice/store';
import { newDestination } from '@sluice/store/conformance';
import {
  adminQuery,
  dropSchema,
  findPlanNode,
  freshSchema,
  newEvent,
  type PlanNode,
  schemaClient,
  sqlLiteral,
  TEST_DATABASE_URL,
  withPostgres,
} from '@sluice/testing';
import { CLAIM_SQL } from './claim.ts';
import { completeAttempts } from './complete.ts';
import { PostgresStore } from './postgres-store.ts';

const keyring = newKeyring();

const T0 = 1_700_000_000_000;

await withPostgres(() => {
  describe('PostgresStore batches the calls of one turn', () => {
    let schema: string;
    let store: PostgresStore;
    let tenant: NewTenant;
    /** Statements the store ran since the test began. */
    let statements: string[];

    beforeEach(async () => {
      schema = freshSchema();
      store = await PostgresStore.open(TEST_DATABASE_URL, { keyring, schema, poolSize: 5 });
      tenant = { id: newId('ten'), name: 'Acme', createdAt: T0 };
      await store.createTenant(tenant, 'hash');
      statements = [];
      // Both ways the store runs a statement: its pool, and the generic-plan pool of claims.
      for (const db of [store.db, store.db.generic]) {
        const query = db.query.bind(db);
        db.query = (text, values) => {
          statements.push(text);
          return query(text, values);
        };
      }
    });
    afterEach(async () => {
      await store.close();
      await dropSchema(schema);
    });

    /** Destinations with `pending[i]` deliveries due each. */
    const destinationsWith = async (pending: number[]): Promise<string[]> => {
      const ids: string[] = [];
      for (const n of pending) {
        const { id } = await store.createDestination(newDestination(tenant.id), T0);
        const events = Array.from({ length: n }, (_, i) => newEvent([id], null, i));
        if (n > 0) await store.acceptEvents(tenant.id, events, T0);
        ids.push(id);
      }
      statements = [];
      return ids;
    };

    it('claims for the ticks of one turn run as one statement, each destination numbered on its own', async () => {
      const ids = await destinationsWith([5, 2, 0, 12]);
      const claims = await Promise.all(ids.map((id) => store.claimDue(id, 4, T0 + 1)));
      assert.equal(statements.length, 1, `one statement: ${statements.length}`);
      assert.deepEqual(
        claims.map((c) => c.deliveries.map((d) => d.sequence)),
        [[1, 2, 3, 4], [1, 2], [], [1, 2, 3, 4]],
      );
      assert.deepEqual(
        claims.map((c) => c.deliveries.map((d) => JSON.parse(d.payload).n)),
        [[0, 1, 2, 3], [0, 1], [], [0, 1, 2, 3]],
        'each destination its own deliveries, oldest first',
      );
      assert.ok(claims.every((c, i) => c.deliveries.every((d) => d.destinationId === ids[i])));
      assert.deepEqual(
        claims.map((c) => c.nextPendingAt),
        [T0, null, null, T0],
      );
      // The next turn numbers on from there.
      const again = await Promise.all(ids.map((id) => store.claimDue(id, 10, T0 + 2)));
      assert.deepEqual(
        again.map((c) => c.deliveries.map((d) => d.sequence)),
        [[5], [], [], [5, 6, 7, 8, 9, 10, 11, 12]],
      );
      assert.deepEqual(
        again.map((c) => c.nextPendingAt),
        [null, null, null, null],
      );
    });

    it('a second claim of one destination in the same turn takes the rows after the first', async () => {
      const [id] = (await destinationsWith([6])) as [string];
      const [a, b] = await Promise.all([store.claimDue(id, 4, T0 + 1), store.claimDue(id, 4, T0 + 1)]);
      assert.deepEqual(
        a?.deliveries.map((d) => d.sequence),
        [1, 2, 3, 4],
      );
      assert.deepEqual(
        b?.deliveries.map((d) => d.sequence),
        [5, 6],
      );
    });

    it('a destination whose row another transaction holds does not hold up the batch', async () => {
      const [busy, free] = (await destinationsWith([3, 3])) as [string, string];
      const other = await schemaClient(schema);
      try {
        await other.query('BEGIN');
        await other.query('SELECT id FROM destinations WHERE id = $1 FOR UPDATE', [busy]);
        const busyClaim = store.claimDue(busy, 10, T0 + 1);
        const freeClaim = store.claimDue(free, 10, T0 + 1);
        // The free destination's claim answers while the busy one's row is still held.
        assert.deepEqual(
          (await freeClaim).deliveries.map((d) => d.sequence),
          [1, 2, 3],
        );
        let settled = false;
        void busyClaim.finally(() => {
          settled = true;
        });
        await new Promise((resolve) => setTimeout(resolve, 100));
        assert.equal(settled, false, 'alone, the busy claim waits for the row');
        await other.query('COMMIT');
        assert.deepEqual(
          (await busyClaim).deliveries.map((d) => d.sequence),
          [1, 2, 3],
        );
      } finally {
        await other.end();
      }
    });

    it('the accepts of one turn run as one statement per tenant, each answered with its own events', async () => {
      const [a, b] = await destinationsWith([0, 0]);
      const other: NewTenant = { id: newId('ten'), name: 'Other', createdAt: T0 };
      await store.createTenant(other, 'hash2');
      const theirs = (await store.createDestination(newDestination(other.id), T0)).id;
      statements = [];
      const answers = await Promise.all([
        store.acceptEvents(tenant.id, [newEvent([a as string], 'k1', 1)], T0),
        store.acceptEvents(
          tenant.id,
          [newEvent([b as string], null, 2), newEvent([a as string, b as string])],
          T0 + 1,
        ),
        store.acceptEvents(other.id, [newEvent([theirs], 'k1', 3)], T0 + 2),
        store.acceptEvents(tenant.id, [newEvent([b as string], 'k1', 4)], T0 + 3),
      ]);
      assert.equal(statements.length, 2, `one statement per tenant: ${statements.length}`);
      assert.deepEqual(
        answers.map((r) => r.map((x) => x.event.deliveries.map((d) => d.destinationId))),
        [[[a]], [[b], [a, b]], [[theirs]], [[a]]],
      );
      const [first, , theirsFirst, repeat] = answers as [
        (typeof answers)[0],
        unknown,
        (typeof answers)[0],
        (typeof answers)[0],
      ];
      assert.equal(repeat[0]?.replayed, true, 'a key two requests share: the later gets the earlier event');
      assert.equal(repeat[0]?.event.id, first[0]?.event.id);
      assert.equal(theirsFirst[0]?.replayed, false, "another tenant's key is its own");
      const pending = await store.db.query("SELECT count(*) AS n FROM deliveries WHERE status = 'pending'");
      assert.equal(pending[0]?.n, 5);
    });

    it("one request's failing events fail it alone: the others of its turn are accepted", async () => {
      const [a] = (await destinationsWith([0])) as [string];
      const answers = await Promise.allSettled([
        store.acceptEvents(tenant.id, [newEvent([a], null, 1)], T0),
        // Postgres text cannot hold a NUL (the API refuses one first; the store must not
        // let it take a neighbour down either).
        store.acceptEvents(tenant.id, [{ ...newEvent([a]), payload: `"${String.fromCharCode(0)}"` }], T0),
        store.acceptEvents(tenant.id, [newEvent([a], null, 3)], T0),
      ]);
      assert.deepEqual(
        answers.map((r) => r.status),
        ['fulfilled', 'rejected', 'fulfilled'],
      );
      const pending = await store.db.query("SELECT count(*) AS n FROM deliveries WHERE status = 'pending'");
      assert.equal(pending[0]?.n, 2);
    });

    it("a batch's plan is linear in the rows it claims, even on the generic plan's one-row guesses", async () => {
      const ids = await destinationsWith([400, 400, 400]);
      const client = await schemaClient(schema);
      try {
        // What a prepared statement runs after its fifth execution.
        await client.query('SET plan_cache_mode = force_generic_plan');
        await client.query(`PREPARE claim(text[], int[], bigint[]) AS ${CLAIM_SQL.due.many}`);
        // EXECUTE takes no bind parameters: the arrays go in as literals.
        const array = (values: (string | number)[]): string => sqlLiteral(client, values);
        const { rows } = await client.query(
          `EXPLAIN (ANALYZE, FORMAT JSON) EXECUTE claim(${array(ids)}, ${array(ids.map(() => 300))}, ${array(ids.map(() => T0 + 1))})`,
        );
        const plan = (rows[0]['QUERY PLAN'] as [{ Plan: PlanNode }])[0].Plan;
        const compared = (node: PlanNode): number =>
          Number(node['Rows Removed by Join Filter'] ?? 0) +
          (node.Plans ?? []).reduce((a, n) => a + compared(n), 0);
        assert.equal(
          compared(plan),
          0,
          `no join compares claimed rows with each other: ${JSON.stringify(plan)}`,
        );
        const loops = (node: PlanNode): number =>
          Math.max(
            node['Index Name'] === 'deliveries_due' && node['Node Type'] === 'Index Scan'
              ? Number(node['Actual Loops'])
              : 0,
            ...(node.Plans ?? []).map(loops),
          );
        assert.ok(
          loops(plan) <= ids.length,
          `deliveries_due probed once per destination, not per row: ${loops(plan)}`,
        );
      } finally {
        await client.end();
      }
      assert.equal(
        (await store.claimDue(ids[0] as string, 1000, T0 + 1)).deliveries.length,
        100,
        'the rest is there',
      );
    });

    it('a completion finds its deliveries and destinations by key, whatever its generic plan was made on', async () => {
      const succeeded = (c: ClaimedDelivery, startedAt: number): CompletedAttempt => ({
        attempt: {
          id: newId('att'),
          deliveryId: c.id,
          destinationId: c.destinationId,
          attempt: c.attempts + 1,
          startedAt,
          finishedAt: startedAt + 5,
          statusCode: 200,
          errorCode: null,
          errorMessage: null,
          responseExcerpt: 'ok',
        },
        status: 'delivered',
        nextAttemptAt: null,
        disableDestination: false,
      });
      /** The statement and values the store would send for `completed`. */
      const statementOf = async (completed: CompletedAttempt[]) => {
        let sent: { text: string; values: unknown[] } | undefined;
        const capture = async (text: string, values: unknown[] = []) => {
          sent = { text, values };
          return [];
        };
        // Successes only: one statement on the generic pool, no transaction.
        const tx = () => assert.fail('a batch of successes needs no transaction');
        await completeAttempts({ generic: { query: capture }, tx }, completed, T0 + 9);
        return sent ?? assert.fail('no statement');
      };
      const [first] = (await destinationsWith([3])) as [string];
      const early = (await store.claimDue(first, 3, T0 + 1)).deliveries;
      // A connection of the pool the store completes on.
      const client = await store.db.genericPool.connect();
      try {
        // The worst case of a cached plan: made on almost empty tables, as a worker's first
        // completions of a fresh install are, then kept while the tables grow.
        const firstBatch = await statementOf([succeeded(early[0] as ClaimedDelivery, T0 + 2)]);
        await client.query({ name: 'complete', text: firstBatch.text, values: firstBatch.values });
        // Grown: 300 destinations, 3,000 deliveries claimed and completed (their old versions
        // stay in the claimed index until a vacuum), 2 claimed still.
        const many = await destinationsWith(Array.from({ length: 300 }, (_, i) => (i === 0 ? 3_000 : 0)));
        const bulk = (await store.claimDue(many[0] as string, 3_000, T0 + 1)).deliveries;
        await store.completeAttempts(
          bulk.map((c) => succeeded(c, T0 + 3)),
          T0 + 4,
        );
        const batch = await statementOf(early.slice(1).map((c) => succeeded(c, T0 + 5)));
        const { rows } = await client.query(
          `EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) EXECUTE complete(${batch.values.map((v) => sqlLiteral(client, v)).join(', ')})`,
        );
        const plan = (rows[0]['QUERY PLAN'] as [{ Plan: PlanNode }])[0].Plan;
        const scans = (node: PlanNode): string[] => [
          ...(node['Index Name'] === undefined && node['Relation Name'] === undefined
            ? []
            : [`${node['Node Type']} ${node['Index Name'] ?? node['Relation Name']}`]),
          ...(node.Plans ?? []).flatMap(scans),
        ];
        // The claimed index holds an entry for every version a claim wrote until a vacuum.
        const wide = scans(plan).filter((s) => s.startsWith('Seq Scan') || s.includes('deliveries_claimed'));
        assert.deepEqual(wide, [], `every row read by its key: ${scans(plan).join('; ')}`);
        assert.ok(
          Number(plan['Shared Hit Blocks'] ?? 0) < 100,
          `pages read for 2 deliveries: ${plan['Shared Hit Blocks']}`,
        );
      } finally {
        client.release();
      }
      const { rows: settled } = await adminQuery(
        `SELECT count(*)::int AS n FROM ${schema}.deliveries WHERE status = 'delivered'`,
      );
      assert.equal(settled[0]?.n, 3_003, 'the prepared completion moved its deliveries');
    });

    for (const [order, index] of [
      ['due', 'deliveries_due'],
      ['sequence', 'deliveries_fifo'],
    ] as const) {
      for (const shape of ['one', 'many'] as const) {
        it(`the ${order} claim (${shape}) reads the partial index ${index} in claim order, without a sort`, async () => {
          const ids = await destinationsWith([2_000, 10]);
          await store.db.query('ANALYZE deliveries');
          const requested = shape === 'one' ? ids.slice(0, 1) : ids;
          // The statement the store runs (EXPLAIN without ANALYZE does not run it).
          const [row] = await store.db.query(`EXPLAIN (FORMAT JSON) ${CLAIM_SQL[order][shape]}`, [
            requested,
            requested.map(() => 10),
            requested.map(() => T0),
          ]);
          assert.ok(row, 'EXPLAIN answered');
          const plan = (row['QUERY PLAN'] as [{ Plan: PlanNode }])[0].Plan;
          const limit =
            findPlanNode(plan, (n) => n['Node Type'] === 'Limit') ?? assert.fail(JSON.stringify(plan));
          const scan = findPlanNode(limit, (n) => n['Index Name'] === index);
          assert.ok(scan, `the claim reads ${index}: ${JSON.stringify(limit)}`);
          assert.equal(
            findPlanNode(limit, (n) => n['Node Type'] === 'Sort'),
            undefined,
            'claim order comes from the index',
          );
        });
      }
    }
  });
});
