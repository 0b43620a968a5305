import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { HEALTHY, newKeyring } from '@sluice/core';
import { newDestination } from './conformance/fixtures.ts';
import { newDestinationRecord, patchedDestination } from './destination.ts';
import { insertDestinationSql, insertValues, updateDestinationSql, updateValues } from './destination-sql.ts';
import { deliveryConditions, pageOf, pageStatement } from './page.ts';
import { DESTINATION_COLUMNS, UPDATABLE_COLUMNS } from './rows.ts';

const T0 = 1_700_000_000_000;
const keyring = newKeyring();

describe('destination records', () => {
  const created = newDestinationRecord(newDestination('ten_1'), T0);

  it('a new destination is active and healthy, created and updated now', () => {
    assert.equal(created.state, 'active');
    assert.equal(created.disabledReason, null);
    assert.deepEqual(created.health, HEALTHY);
    assert.notEqual(created.health, HEALTHY, 'a copy, not the shared constant');
    assert.equal(created.createdAt, T0);
    assert.equal(created.updatedAt, T0);
  });

  it('a patch sets the fields it defines, leaves the undefined ones, and moves updatedAt', () => {
    const next = patchedDestination(
      created,
      { name: 'renamed', url: undefined, maxConcurrency: null },
      T0 + 5,
    );
    assert.equal(next.name, 'renamed');
    assert.equal(next.url, created.url);
    assert.equal(next.maxConcurrency, null);
    assert.equal(next.createdAt, T0);
    assert.equal(next.updatedAt, T0 + 5);
  });
});

describe('destination statements', () => {
  const created = newDestinationRecord(newDestination('ten_1'), T0);
  const pg = (n: number) => `$${n}`;

  it('an insert marks one value per column, in column order', () => {
    const sql = insertDestinationSql(pg);
    assert.match(sql, new RegExp(`\\$${DESTINATION_COLUMNS.length}\\)`));
    assert.equal(insertValues(created, keyring).length, DESTINATION_COLUMNS.length);
    assert.equal(insertValues(created, keyring)[0], created.id);
  });

  it('an update never writes the id, the owner or the creation time, and names the row by $1', () => {
    const sql = updateDestinationSql(pg);
    assert.doesNotMatch(sql, /tenant_id =|created_at =|SET id =/);
    assert.match(sql, /WHERE id = \$1$/);
    assert.deepEqual(updateValues(created, keyring).length, UPDATABLE_COLUMNS.length + 1);
    assert.equal(updateValues(created, keyring)[0], created.id);
  });
});

describe('pageOf', () => {
  const rows = [{ id: 'c' }, { id: 'b' }, { id: 'a' }];

  it('a row more than the limit means a next page, after the last row kept', () => {
    assert.deepEqual(
      pageOf(rows, 2, (r) => r.id),
      { items: ['c', 'b'], next: 'b' },
    );
  });

  it('no row more: the end', () => {
    assert.deepEqual(
      pageOf(rows, 3, (r) => r.id),
      { items: ['c', 'b', 'a'], next: null },
    );
  });
});

describe('pageStatement', () => {
  it('marks each condition, the cursor and the limit in order, and asks for one row more', () => {
    const conditions = deliveryConditions({ destinationId: 'dst_1', changedSince: 5 });
    const { text, values } = pageStatement((n) => `?${n}`, 'deliveries', '*', ['x IS NULL'], conditions, {
      limit: 10,
      after: 'dlv_9',
    });
    assert.equal(
      text,
      'SELECT * FROM deliveries WHERE x IS NULL AND destination_id = ?1 AND updated_at >= ?2 AND id < ?3 ORDER BY id DESC LIMIT ?4',
    );
    assert.deepEqual(values, ['dst_1', 5, 'dlv_9', 11]);
  });
});
