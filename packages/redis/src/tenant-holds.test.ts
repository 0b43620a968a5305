import assert from 'node:assert/strict';
import { after, it } from 'node:test';
import { cleanup, REDIS_TARGET, requireRedis, uniquePrefix } from '@sluice/testing';
import { connectRedis } from './connection.ts';
import { Keys } from './keys.ts';
import {
  heldEverywhere,
  TENANT_HOLDS_INTERVAL_MS,
  TenantHoldsReader,
  writeTenantHolds,
} from './tenant-holds.ts';

await requireRedis();
const redis = connectRedis(REDIS_TARGET);
after(() => redis.disconnect());

it('a tenant is held only when every live worker lists it; a stale entry is a worker gone', () => {
  const now = 1_000_000;
  const fresh = (held: string[]) => ({ at: now - 100, held });
  assert.equal(heldEverywhere([], 'a', now), false, 'no worker: nothing held');
  assert.equal(heldEverywhere([fresh(['a']), fresh(['a', 'b'])], 'a', now), true);
  assert.equal(heldEverywhere([fresh(['a']), fresh(['b'])], 'a', now), false, 'one worker has room for it');
  const gone = { at: now - 10 * TENANT_HOLDS_INTERVAL_MS, held: [] };
  assert.equal(heldEverywhere([fresh(['a']), gone], 'a', now), true, 'a stale entry does not count');
});

it("the workers' entries reach a reader through Redis; a closed worker's entry is gone", async () => {
  const prefix = uniquePrefix();
  const keys = new Keys(prefix);
  let second = ['ten_a'];
  const one = writeTenantHolds({ redis, keys, held: () => ['ten_a', 'ten_b'], intervalMs: 20 });
  const two = writeTenantHolds({ redis, keys, held: () => second, intervalMs: 20 });
  try {
    const reader = new TenantHoldsReader({ redis, keys });
    await new Promise((r) => setTimeout(r, 60));
    await reader.refresh();
    assert.equal(reader.held('ten_a'), true, 'both workers hold it');
    assert.equal(reader.held('ten_b'), false, 'the second has room for it');
    second = [];
    await new Promise((r) => setTimeout(r, 60));
    await reader.refresh();
    assert.equal(reader.held('ten_a'), false, 'the second freed it');
    await two.close();
    await reader.refresh();
    assert.equal(reader.held('ten_b'), true, 'one worker left, and it holds ten_b');
  } finally {
    await one.close();
    await two.close();
    await cleanup(redis, prefix);
  }
});

it('a field left by a worker killed without closing is dropped by the reader once long stale', async () => {
  const prefix = uniquePrefix();
  const keys = new Keys(prefix);
  try {
    await redis.hset(
      keys.tenantsHeld(),
      'gone',
      JSON.stringify({ at: Date.now() - 60_000, held: ['ten_a'] }),
    );
    await redis.hset(keys.tenantsHeld(), 'garbled', 'not json');
    const reader = new TenantHoldsReader({ redis, keys });
    await reader.refresh();
    assert.equal(reader.held('ten_a'), false, 'a stale entry holds nothing');
    let left = 2;
    for (const deadline = Date.now() + 2_000; left > 0 && Date.now() < deadline; )
      left = await redis.hlen(keys.tenantsHeld());
    assert.equal(left, 0, 'both fields deleted');
  } finally {
    await cleanup(redis, prefix);
  }
});
