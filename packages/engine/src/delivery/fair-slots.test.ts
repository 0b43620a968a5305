import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FairSlots, type Release } from './fair-slots.ts';

/** Takes `n` slots for a tenant, recording each grant; returns their releases as granted. */
function taker(slots: FairSlots) {
  const granted: { tenant: string; release: Release }[] = [];
  const take = (tenant: string, n: number, destination = `${tenant}-d`) => {
    for (let i = 0; i < n; i++)
      void slots.take(tenant, destination).then((release) => granted.push({ tenant, release }));
  };
  const held = (tenant: string) => granted.filter((g) => g.tenant === tenant).length;
  return { granted, take, held };
}

const settle = () => new Promise((resolve) => setImmediate(resolve));

describe('FairSlots: a tenant’s share of the request slots', () => {
  it('a tenant whose requests hang holds its share; one arriving later starts at once', async () => {
    let now = 0;
    const slots = new FairSlots({ size: 100, quickMs: 1_000, clock: () => now });
    const t = taker(slots);
    // Quick at first: it may take the pool less the reserve (100 − 10).
    t.take('hanging', 200);
    await settle();
    assert.equal(t.held('hanging'), 90);
    assert.equal(slots.heldBySlow('hanging'), false);
    now += 1_000; // its requests have hung for the quick limit: no more beyond its share
    assert.equal(slots.heldBySlow('hanging'), true);
    t.take('quiet', 5);
    await settle();
    assert.equal(t.held('quiet'), 5, 'the quiet tenant started every request at once');
    // 60 of its requests end: it holds 30, and takes slots again only up to its share beside
    // the quiet tenant (100 ÷ 3 = 33); the rest stay free for others.
    for (const g of t.granted.filter((x) => x.tenant === 'hanging').slice(0, 60)) g.release();
    await settle();
    assert.equal(t.held('hanging') - 60, 33);
    assert.equal(slots.free, 100 - 33 - 5);
  });

  it('a tenant alone whose requests answer quickly uses the rest; round robin across tenants', async () => {
    const slots = new FairSlots({ size: 4, quickMs: 1_000, clock: () => 0 });
    const order: string[] = [];
    const releases: Release[] = [];
    for (const [tenant, destination] of [
      ['a', 'a1'],
      ['a', 'a1'],
      ['a', 'a2'],
      ['b', 'b1'],
      ['a', 'a1'],
      ['b', 'b1'],
    ] as const)
      void slots.take(tenant, destination).then((release) => {
        order.push(`${tenant}:${destination}`);
        releases.push(release);
      });
    await settle();
    // Size 4: a alone takes up to 4 − 1 (the reserve is one slot); then b arrives.
    assert.deepEqual(order, ['a:a1', 'a:a1', 'a:a2', 'b:b1']);
    for (const r of releases.splice(0)) r();
    await settle();
    assert.deepEqual(order.slice(4), ['a:a1', 'b:b1']);
  });

  it('stopped, it grants nothing more', async () => {
    const slots = new FairSlots({ size: 1, quickMs: 1_000 });
    const t = taker(slots);
    t.take('a', 2);
    await settle();
    slots.stop();
    t.granted[0]?.release();
    await settle();
    assert.equal(t.granted.length, 1);
  });

  it('a wait stopped by its signal leaves the queue (its tenant counts no more); a granted one runs', async () => {
    const slots = new FairSlots({ size: 4, quickMs: 1_000 });
    // A lone quick tenant takes the pool less the reserve (one slot).
    for (let i = 0; i < 3; i++) await slots.take('a', 'a-d');
    const stop = new AbortController();
    let granted = 0;
    const waits = [1, 2].map(() => slots.take('b', 'b-d', { signal: stop.signal, onGrant: () => granted++ }));
    assert.equal(granted, 1, 'its share (one slot) at once, counted before any callback runs');
    assert.equal(slots.waiting, 1, 'beyond its share with the reserve taken: the second waits');
    stop.abort(new Error('handed back'));
    const [first, second] = await Promise.allSettled(waits);
    assert.equal(first?.status, 'fulfilled', 'granted before the stop: it runs');
    assert.equal(second?.status, 'rejected');
    assert.equal(slots.waiting, 0);
    await assert.rejects(slots.take('b', 'b-d', { signal: stop.signal }), /handed back/, 'stopped already');
  });
});
