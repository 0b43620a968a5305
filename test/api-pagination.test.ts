/**
 * Cursor pagination: walking every page while rows are being added (and, for deliveries,
 * while their statuses change under the walk) gives every row that existed at the start
 * exactly once, never a duplicate, newest first; the last page says so; a bad cursor is a
 * 400 naming `query.cursor`.
 */

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Page } from '@sluice/client';
import { collect, fileBox, rejectsWith } from './helpers/client.ts';

const get = fileBox();

/**
 * Walks `pages`, calling `between` after each page; checks the walk against `existing` (the
 * ids there were before it started): each seen exactly once, no id twice, ids descending.
 */
async function walkWhileInserting<T extends { id: string }>(
  pages: AsyncIterable<Page<T>>,
  existing: readonly string[],
  between: () => Promise<void>,
  limit: number,
): Promise<{ seen: string[]; pages: number }> {
  const seen: string[] = [];
  let count = 0;
  for await (const page of pages) {
    count++;
    assert.ok(page.data.length <= limit, `page ${count} holds ${page.data.length} > ${limit}`);
    seen.push(...page.data.map((r) => r.id));
    if (page.nextCursor !== null) await between();
  }
  assert.equal(new Set(seen).size, seen.length, 'no row twice');
  const seenSet = new Set(seen);
  assert.deepEqual(
    existing.filter((id) => !seenSet.has(id)),
    [],
    'every row that existed is seen',
  );
  assert.deepEqual(seen, [...seen].sort().reverse(), 'newest first');
  return { seen, pages: count };
}

describe('pagination', () => {
  it('destinations: every row once while rows are added', { timeout: 30_000 }, async () => {
    const { api } = await get().tenant('dst-walk');
    const create = (n: number) =>
      api.destinations.create({
        name: `d${n}`,
        url: get().rcv.url('walk'),
        rateLimit: { limit: 1, period: 'second' },
      });
    const existing: string[] = [];
    for (let n = 0; n < 23; n++) existing.push((await create(n)).id);
    let added = 0;
    const { seen, pages } = await walkWhileInserting(
      api.destinations.pages({ limit: 5 }),
      existing,
      async () => {
        await create(100 + added++);
        await create(100 + added++);
      },
      5,
    );
    assert.equal(pages, 5);
    assert.deepEqual(seen, [...existing].reverse(), 'exactly the rows that existed, newest first');
    const now = await collect(api.destinations.listAll({ limit: 500 }));
    assert.equal(now.length, 23 + added, 'the added rows are there, on a fresh walk');
  });

  it('deliveries: every row once while events arrive and statuses change', { timeout: 60_000 }, async () => {
    const { api } = await get().tenant('dlv-walk');
    const active = await api.destinations.create({
      url: get().rcv.url('dlv'),
      rateLimit: { limit: 20, period: 'second' },
    });
    const batch = await api.events.sendBatch(
      Array.from({ length: 37 }, (_, n) => ({ type: 'walk', payload: { n }, destinationId: active.id })),
    );
    const existing = batch.data.map((e) => e.deliveries[0]!.id);
    let added = 0;
    const statuses = new Set<string>();
    const { seen } = await walkWhileInserting(
      api.deliveries.pages({ limit: 6 }),
      existing,
      async () => {
        await api.events.sendBatch([
          { type: 'walk', payload: { more: added++ }, destinationId: active.id },
          { type: 'walk', payload: { more: added++ }, destinationId: active.id },
        ]);
        // Give the deliveries time to move, so rows change status under the walk.
        await new Promise((r) => setTimeout(r, 60));
      },
      6,
    );
    for (const d of await collect(api.deliveries.listAll({ limit: 500 }))) statuses.add(d.status);
    assert.deepEqual(seen, [...existing].sort().reverse());
    assert.ok(added > 0);
    assert.ok(statuses.has('delivered'), `rows changed status under the walk: ${[...statuses]}`);
    const filtered = await walkWhileInserting(
      api.deliveries.pages({ limit: 4, destinationId: active.id }),
      existing,
      async () => {
        await api.events.send({ type: 'walk', payload: {}, destinationId: active.id });
      },
      4,
    );
    assert.ok(filtered.seen.length >= existing.length);
  });

  it('tenants: every row once while tenants are added', async () => {
    const admin = get().admin;
    for (let n = 0; n < 7; n++) await admin.tenants.create({ name: `t${n}` });
    const existing = (await collect(admin.tenants.listAll())).map((t) => t.id);
    let n = 0;
    await walkWhileInserting(
      admin.tenants.pages({ limit: 3 }),
      existing,
      async () => {
        await admin.tenants.create({ name: `late${n++}` });
      },
      3,
    );
  });

  it('the last page has nextCursor null, also when the rows fill it exactly; limit defaults to 50', async () => {
    const { api } = await get().tenant('exact');
    const dst = await api.destinations.create({
      url: get().rcv.url('exact'),
      rateLimit: { limit: 1, period: 'second' },
    });
    await api.destinations.pause(dst.id);
    await api.events.sendBatch(
      Array.from({ length: 60 }, (_, n) => ({ type: 'x', payload: n, destinationId: dst.id })),
    );
    const sizes: (number | null)[][] = [];
    for await (const page of api.deliveries.pages({ limit: 20 }))
      sizes.push([page.data.length, page.nextCursor === null ? null : 1]);
    assert.deepEqual(sizes, [
      [20, 1],
      [20, 1],
      [20, null],
    ]);
    const first = await api.deliveries.list();
    assert.equal(first.data.length, 50);
    assert.equal(typeof first.nextCursor, 'string');
    const rest = await api.deliveries.list({ cursor: first.nextCursor! });
    assert.equal(rest.data.length, 10);
    assert.equal(rest.nextCursor, null);
    assert.equal((await api.deliveries.list({ limit: 500 })).data.length, 60);
    const from = await collect(api.deliveries.listAll({ cursor: first.nextCursor!, limit: 3 }));
    assert.deepEqual(
      from.map((d) => d.id),
      rest.data.map((d) => d.id),
      'listAll starts at a given cursor',
    );
  });

  it('an invalid cursor → 400 validation_failed at query.cursor', async () => {
    const { api } = await get().tenant('cursors');
    const dst = await api.destinations.create({
      url: get().rcv.url('c'),
      rateLimit: { limit: 1, period: 'second' },
    });
    await api.destinations.create({ url: get().rcv.url('c'), rateLimit: { limit: 1, period: 'second' } });
    await api.destinations.pause(dst.id);
    await api.events.sendBatch([1, 2].map((n) => ({ type: 'x', payload: n, destinationId: dst.id })));
    const dstCursor = (await api.destinations.list({ limit: 1 })).nextCursor!;
    const dlvCursor = (await api.deliveries.list({ limit: 1 })).nextCursor!;
    assert.ok(dstCursor && dlvCursor);
    const b64 = (s: string) => Buffer.from(s).toString('base64url');
    const bad: [string, () => Promise<unknown>][] = [
      ['garbage', () => api.destinations.list({ cursor: 'garbage!!' })],
      ['base64 of a non-id', () => api.destinations.list({ cursor: b64('hello') })],
      ['base64 of a malformed id', () => api.destinations.list({ cursor: b64('dst_123') })],
      ['a deliveries cursor on destinations', () => api.destinations.list({ cursor: dlvCursor })],
      ['a destinations cursor on deliveries', () => api.deliveries.list({ cursor: dstCursor })],
      ['a destinations cursor on tenants', () => get().admin.tenants.list({ cursor: dstCursor })],
      ['an empty cursor', () => api.destinations.list({ cursor: '' })],
      ['a cursor of 201 characters', () => api.deliveries.list({ cursor: 'A'.repeat(201) })],
    ];
    for (const [what, call] of bad) {
      const err = await rejectsWith(call(), 400, 'validation_failed', what);
      assert.ok(
        err.issues.some((i) => i.path === 'query.cursor'),
        `${what}: ${JSON.stringify(err.details)}`,
      );
    }
  });
});
