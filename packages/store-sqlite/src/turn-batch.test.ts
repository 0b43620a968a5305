/**
 * Group commit (turn-batch.ts): calls made together share one transaction, each answered
 * only after the commit; a call that throws rolls back its own writes alone.
 */

import assert from 'node:assert/strict';
import { DatabaseSync } from 'node:sqlite';
import { describe, it } from 'node:test';
import { TurnBatch } from './turn-batch.ts';

function setup(defer?: (run: () => void) => void) {
  const db = new DatabaseSync(':memory:');
  db.exec('CREATE TABLE t (v TEXT NOT NULL)');
  let transactions = 0;
  const batch = new TurnBatch<string, number>({
    db,
    tx: (fn) => {
      transactions++;
      db.exec('BEGIN IMMEDIATE');
      try {
        fn();
        db.exec('COMMIT');
      } catch (err) {
        db.exec('ROLLBACK');
        throw err;
      }
    },
    one: (v) => {
      db.prepare('INSERT INTO t (v) VALUES (?)').run(v);
      if (v.startsWith('bad')) throw new Error(`refused ${v}`);
      return Number((db.prepare('SELECT count(*) AS n FROM t').get() as { n: number }).n);
    },
    ...(defer === undefined ? {} : { defer }),
  });
  const rows = () =>
    db
      .prepare('SELECT v FROM t ORDER BY rowid')
      .all()
      .map((r) => r.v);
  return { db, batch, rows, transactions: () => transactions };
}

describe('TurnBatch', () => {
  for (const [name, defer] of [
    ['setImmediate', undefined],
    ['process.nextTick', process.nextTick],
  ] as const) {
    it(`runs the calls made together in one transaction (${name}), one failing alone`, async () => {
      const { db, batch, rows, transactions } = setup(defer);
      const results = await Promise.allSettled([batch.run('a'), batch.run('bad-b'), batch.run('c')]);
      assert.equal(transactions(), 1);
      assert.deepEqual(
        results.map((r) => (r.status === 'fulfilled' ? r.value : (r.reason as Error).message)),
        [1, 'refused bad-b', 2],
      );
      assert.deepEqual(rows(), ['a', 'c'], 'the failed call left nothing; the others committed');
      db.close();
    });
  }

  it('with process.nextTick, calls reached through promise chains of one task share a batch', async () => {
    const { db, batch, transactions } = setup(process.nextTick);
    const after = async (awaits: number, v: string) => {
      for (let i = 0; i < awaits; i++) await Promise.resolve();
      return batch.run(v);
    };
    await Promise.all([after(1, 'a'), after(5, 'b'), after(3, 'c')]);
    assert.equal(transactions(), 1);
    db.close();
  });

  it('answers only after the commit', async () => {
    const { db, batch } = setup(process.nextTick);
    const seen: boolean[] = [];
    const pending = batch.run('a').then(() => seen.push(db.isTransaction));
    await pending;
    assert.deepEqual(seen, [false], 'no transaction open when the caller hears back');
    db.close();
  });

  it('a failed commit fails every call of the batch', async () => {
    const { db, batch } = setup();
    db.exec('BEGIN'); // the batch's BEGIN IMMEDIATE fails inside an open transaction
    const results = await Promise.allSettled([batch.run('a'), batch.run('b')]);
    assert.deepEqual(
      results.map((r) => r.status),
      ['rejected', 'rejected'],
    );
    db.exec('ROLLBACK');
    db.close();
  });

  it('calls made in later tasks run in later batches', async () => {
    const { db, batch, transactions } = setup(process.nextTick);
    await batch.run('a');
    await new Promise((r) => setImmediate(r));
    await batch.run('b');
    assert.equal(transactions(), 2);
    db.close();
  });
});
