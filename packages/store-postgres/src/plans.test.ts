/**
 * The plans a connection keeps. The store's statements are named (db.ts): after its fifth run
 * a connection may keep a generic plan, made on the tables as they were then — on a fresh
 * system, nearly empty — and use it however large they grow.
 */

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { newId, newKeyring } from '@sluice/core';
import pg from 'pg';
import { PostgresStore } from './postgres-store.ts';
import { DESTINATION_BY_ID, DESTINATION_BY_ID_FOR_UPDATE } from './rows.ts';
import {
  dropSchema,
  findPlanNode,
  freshSchema,
  newDestination,
  type PlanNode,
  TEST_DATABASE_URL,
  withPostgres,
} from './testing.ts';

const T0 = 1_700_000_000_000;

await withPostgres('the plans a connection keeps', () => {
  describe('the plans a connection keeps', () => {
    const schema = freshSchema();
    let store: PostgresStore;
    let client: pg.Client;

    before(async () => {
      store = await PostgresStore.open(TEST_DATABASE_URL, { keyring: newKeyring(), schema, poolSize: 2 });
      const tenant = { id: newId('ten'), name: 'Acme', createdAt: T0 };
      await store.createTenant(tenant, 'hash');
      // A table as a new system has it: two destinations, one of them deleted.
      await store.createDestination(newDestination(tenant.id), T0);
      const gone = await store.createDestination(newDestination(tenant.id), T0);
      await store.deleteDestination(gone.id, T0);
      client = new pg.Client({ connectionString: TEST_DATABASE_URL, options: `-c search_path=${schema}` });
      await client.connect();
      // What a named statement may run from its sixth execution on.
      await client.query('SET plan_cache_mode = force_generic_plan');
    });

    after(async () => {
      await client.end();
      await store.close();
      await dropSchema(schema);
    });

    for (const [name, sql] of [
      ['by id', DESTINATION_BY_ID],
      ['by id, locked', DESTINATION_BY_ID_FOR_UPDATE],
    ] as const) {
      it(`a destination ${name} is read through its primary key, not a whole index`, async () => {
        const statement = `p_${name.replace(/\W+/g, '_')}`;
        await client.query(`PREPARE ${statement}(text) AS ${sql}`);
        const { rows } = await client.query(`EXPLAIN (FORMAT JSON) EXECUTE ${statement}('dst_x')`);
        const plan = (rows[0]['QUERY PLAN'] as [{ Plan: PlanNode }])[0].Plan;
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
    });
  });
});
