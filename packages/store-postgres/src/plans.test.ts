/**
 * The plans a connection keeps. The store's statements are named (db.ts): after its fifth run
 * a connection may keep a generic plan, made on the tables as they were then — on a fresh
 * system, nearly empty — and use it however large they grow. Each statement here is planned
 * so on the pool the store runs it on; none may read a whole table or index for the rows it
 * asks for by key.
 */

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { newId, newKeyring } from '@sluice/core';
import { newDestination } from '@sluice/store/conformance';
import {
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
import type pg from 'pg';
import { acceptEvents } from './accept.ts';
import { countsForMany } from './counts.ts';
import type { Db, Queryable } from './db.ts';
import { claimProbe } from './health.ts';
import { cancelOrphans, destinationWork, releaseClaims } from './lifecycle.ts';
import { deleteExpired, listTenants, pageDestinations } from './lists.ts';
import { PostgresStore } from './postgres-store.ts';
import { DESTINATION_BY_ID, DESTINATION_BY_ID_FOR_UPDATE } from './rows.ts';
import { DELETE_DESTINATION, keyLookups } from './tenants.ts';

const T0 = 1_700_000_000_000;
const keyring = newKeyring();

/** A statement the store sends, its values, and whether on the generic-plan pool. */
interface Sent {
  text: string;
  values: unknown[];
  generic: boolean;
}

/**
 * The statements `call` sends through `db`, which runs none (each answers no rows). A call
 * that needs the rows it reads fails after sending (an accept's lost keys): what it sent counts.
 */
async function sentBy(call: (db: Db) => Promise<unknown>): Promise<Sent[]> {
  const sent: Sent[] = [];
  const on = (generic: boolean): Queryable => ({
    query: async (text, values = []) => {
      sent.push({ text, values, generic });
      return [];
    },
  });
  const db = {
    ...on(false),
    generic: on(true),
    tx: (fn: (q: Queryable) => Promise<unknown>, onGeneric = false) => fn(on(onGeneric)),
  };
  await call(db as unknown as Db).catch(() => {});
  return sent;
}

/** The one statement `call` sends whose text has `marker`. */
async function sentWith(marker: string, call: (db: Db) => Promise<unknown>): Promise<Sent> {
  const found = (await sentBy(call)).filter((s) => s.text.includes(marker));
  assert.equal(found.length, 1, `one statement with ${marker}`);
  return found[0] as Sent;
}

const pass = (): void => {};

/**
 * The scans that read all of a table or an index: a sequential scan, or an index scan with no
 * condition unless it walks in order until a LIMIT stops it (a page, the walk's first step).
 */
function wholeReads(plan: PlanNode): string[] {
  const found: string[] = [];
  const walk = (node: PlanNode, limited: boolean): void => {
    const scan = node['Node Type'];
    const name = `${scan} ${node['Relation Name'] ?? ''} ${node['Index Name'] ?? ''}`.trim();
    if (scan === 'Seq Scan') found.push(name);
    if (scan === 'Bitmap Index Scan' && node['Index Cond'] === undefined) found.push(name);
    if ((scan === 'Index Scan' || scan === 'Index Only Scan') && node['Index Cond'] === undefined && !limited)
      found.push(name);
    // A LIMIT bounds a walk under it, through what passes its rows on as they come.
    const passes = ['Limit', 'LockRows', 'Subquery Scan', 'Result'].includes(scan);
    for (const child of node.Plans ?? []) walk(child, scan === 'Limit' || (limited && passes));
  };
  walk(plan, false);
  return found;
}

/** The first scan of `relation` in the plan (depth first). */
function scanOf(plan: PlanNode, relation: string): PlanNode {
  return (
    findPlanNode(plan, (n) => n['Relation Name'] === relation && n['Node Type'] !== 'ModifyTable') ??
    assert.fail(`no scan of ${relation}: ${JSON.stringify(plan)}`)
  );
}

/** The index a scan of `relation` reads: its own, or that of the bitmap under it. */
function indexOf(plan: PlanNode, relation: string): string | undefined {
  const scan = scanOf(plan, relation);
  return scan['Index Name'] ?? findPlanNode(scan, (n) => n['Index Name'] !== undefined)?.['Index Name'];
}

await withPostgres(() => {
  describe('the plans a connection keeps', () => {
    const schema = freshSchema();
    let store: PostgresStore;
    let client: pg.Client;
    let tenantId: string;

    before(async () => {
      store = await PostgresStore.open(TEST_DATABASE_URL, { keyring, schema, poolSize: 2 });
      const tenant = { id: newId('ten'), name: 'Acme', createdAt: T0 };
      tenantId = tenant.id;
      await store.createTenant(tenant, 'hash');
      // The tables as a new system has them: two destinations, one of them deleted, two
      // events (one with an idempotency key), their deliveries, one of them tried once.
      const live = await store.createDestination(newDestination(tenant.id), T0);
      const gone = await store.createDestination(newDestination(tenant.id), T0);
      await store.acceptEvents(tenant.id, [newEvent([live.id, gone.id], 'key'), newEvent([live.id])], T0);
      await store.deleteDestination(gone.id, T0);
      const [tried] = (await store.claimDue(live.id, 1, T0 + 1)).deliveries;
      assert.ok(tried);
      const attempt = { id: newId('att'), deliveryId: tried.id, destinationId: live.id, attempt: 1 };
      const failed = { statusCode: 500, errorCode: null, errorMessage: null, responseExcerpt: null };
      await store.completeAttempts(
        [
          {
            attempt: { ...attempt, startedAt: T0 + 2, finishedAt: T0 + 3, ...failed },
            status: 'pending',
            nextAttemptAt: T0 + 10,
            disableDestination: false,
          },
        ],
        T0 + 3,
      );
      client = await schemaClient(schema);
      // What a named statement may run from its sixth execution on.
      await client.query('SET plan_cache_mode = force_generic_plan');
    });

    after(async () => {
      await client.end();
      await store.close();
      await dropSchema(schema);
    });

    let prepared = 0;
    /** The generic plan of `sent` on a connection of the pool it goes to (db.ts). */
    const planOf = async ({ text, values, generic }: Sent): Promise<PlanNode> => {
      const on = generic ? await store.db.genericPool.connect() : client;
      try {
        const name = `plan_${++prepared}`;
        await on.query(`PREPARE ${name} AS ${text}`);
        const args = values.length === 0 ? '' : `(${values.map((v) => sqlLiteral(on, v)).join(', ')})`;
        const { rows } = await on.query(`EXPLAIN (FORMAT JSON) EXECUTE ${name}${args}`);
        await on.query(`DEALLOCATE ${name}`);
        return (rows[0]['QUERY PLAN'] as [{ Plan: PlanNode }])[0].Plan;
      } finally {
        if (on !== client) (on as pg.PoolClient).release();
      }
    };

    for (const [name, sql] of [
      ['by id', DESTINATION_BY_ID],
      ['by id, locked', DESTINATION_BY_ID_FOR_UPDATE],
    ] as const) {
      it(`a destination ${name} is read through its primary key, not a whole index`, async () => {
        const plan = await planOf({ text: sql, values: ['dst_x'], generic: false });
        const scan = findPlanNode(plan, (n) => n['Relation Name'] === 'destinations');
        assert.equal(scan?.['Index Name'], 'destinations_pkey', JSON.stringify(plan));
      });
    }

    it('a deleted destination is not found by id, a live one is', async () => {
      const [live, deleted] = (
        await client.query('SELECT id, deleted_at FROM destinations ORDER BY deleted_at NULLS FIRST')
      ).rows as { id: string }[];
      assert.ok(live && deleted);
      assert.equal((await store.getDestination(live.id))?.id, live.id);
      assert.equal(await store.getDestination(deleted.id), undefined);
      assert.equal(await store.updateDestination(deleted.id, { name: 'x' }, T0), undefined);
      assert.equal(await store.deleteDestination(deleted.id, T0), false, 'deleted once');
    });

    /** Each statement, and what its plan must read besides no whole table or index. */
    const cases: [string, () => Promise<Sent[]>, (plan: PlanNode) => void][] = [
      [
        "a destination's deletion finds it by its primary key",
        async () => [{ text: DELETE_DESTINATION, values: ['dst_x', T0], generic: false }],
        (plan) => assert.equal(indexOf(plan, 'destinations'), 'destinations_pkey'),
      ],
      [
        "every tenant's destinations, a page at a time, walk back along the primary key",
        async () => [
          ...(await sentBy((db) => pageDestinations(db, keyring, undefined, { limit: 10 }))),
          ...(await sentBy((db) => pageDestinations(db, keyring, undefined, { limit: 10, after: 'dst_x' }))),
        ],
        (plan) => assert.equal(indexOf(plan, 'destinations'), 'destinations_pkey'),
      ],
      [
        "a tenant's destinations, a page at a time, walk back along destinations_tenant",
        () => sentBy((db) => pageDestinations(db, keyring, tenantId, { limit: 10, after: 'dst_x' })),
        (plan) => assert.equal(indexOf(plan, 'destinations'), 'destinations_tenant'),
      ],
      [
        'the tenants, a page at a time, walk back along the primary key',
        async () => [
          ...(await sentBy((db) => listTenants(db, { limit: 10 }))),
          ...(await sentBy((db) => listTenants(db, { limit: 10, after: 'ten_x' }))),
        ],
        (plan) => assert.equal(indexOf(plan, 'tenants'), 'tenants_pkey'),
      ],
      [
        "an API key's tenant is read by its primary key",
        () => sentBy((db) => keyLookups(db).load('hash')),
        (plan) => assert.equal(indexOf(plan, 'tenants'), 'tenants_pkey'),
      ],
      [
        'the events holding idempotency keys are found by tenant and key',
        async () => [
          await sentWith('idempotency_key = k.key', (db) =>
            acceptEvents(db, tenantId, [newEvent([], 'key')], T0),
          ),
        ],
        (plan) =>
          assert.match(
            findPlanNode(plan, (n) => n['Index Name'] === 'events_idempotency')?.['Index Cond'] ?? '',
            /tenant_id.*idempotency_key/,
          ),
      ],
      [
        "the counts of a page of destinations read each one's entries",
        () => sentBy((db) => countsForMany(db, ['dst_x', 'dst_y'], T0)),
        pass,
      ],
      [
        'a sweep cancels the pending deliveries of deleted destinations under their ids',
        () => sentBy((db) => cancelOrphans(db, T0)),
        (plan) =>
          assert.match(
            findPlanNode(plan, (n) => n['Index Name'] === 'deliveries_destination')?.['Index Cond'] ?? '',
            /destination_id = ANY/,
          ),
      ],
      [
        'released claims are found by their primary key',
        () => sentBy((db) => releaseClaims(db, ['dlv_x'], T0)),
        (plan) => assert.equal(indexOf(plan, 'deliveries'), 'deliveries_pkey'),
      ],
      [
        'retention deletes the rows it picked by their keys',
        () => sentBy((db) => deleteExpired(db, T0, 100)),
        pass,
      ],
      [
        "a destination's next pending time is the first entry of deliveries_due",
        async () => [
          await sentWith('next_attempt_at', (db) => claimProbe(db, 'dst_x', T0, T0)),
          await sentWith('next_attempt_at', (db) => destinationWork(db, 'dst_x')),
        ],
        (plan) => assert.equal(indexOf(plan, 'deliveries'), 'deliveries_due'),
      ],
    ];
    for (const [name, statements, check] of cases) {
      it(name, async () => {
        const sent = await statements();
        assert.ok(sent.length > 0, 'sent');
        for (const s of sent) {
          const plan = await planOf(s);
          assert.deepEqual(wholeReads(plan), [], `${s.text}\n${JSON.stringify(plan)}`);
          check(plan);
        }
      });
    }
  });
});
