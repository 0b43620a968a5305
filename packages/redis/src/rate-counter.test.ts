import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { mulberry32, takeRate } from '@sluice/core';
import { cleanup, connect, requireRedis, uniquePrefix } from '@sluice/testing';
import type { Redis } from 'ioredis';
import { Keys } from './keys.ts';
import { RedisRateCounter } from './rate-counter.ts';

await requireRedis();

const T0 = 1_700_000_000_000;

describe('RedisRateCounter', () => {
  const redis: Redis[] = [];
  const prefix = uniquePrefix();
  before(() => {
    redis.push(connect(), connect(), connect());
  });
  after(async () => {
    await cleanup(redis[0] as Redis, prefix);
    for (const r of redis) r.disconnect();
  });

  it('decides exactly as core takeRate does, over random takes and quotas', async () => {
    for (let seed = 1; seed <= 8; seed++) {
      const random = mulberry32(seed);
      const keys = new Keys(`${prefix}-${seed}`);
      const counter = new RedisRateCounter(redis[0] as Redis, keys);
      const perSecond = [1, 3, 7, 10, 333, 1_000][Math.floor(random() * 6)] as number;
      let tat = 0;
      let now = T0 + random() * 1_000;
      for (let i = 0; i < 200; i++) {
        now += random() < 0.3 ? random() * 2_000 : random() * 20;
        const n = 1 + Math.floor(random() * Math.min(perSecond + 2, 50));
        const expected = takeRate(tat, n, perSecond, now);
        if (expected.ok) tat = expected.tat;
        assert.deepEqual(await counter.take('ten_a', n, perSecond, now), expected, `seed ${seed}, take ${i}`);
      }
      assert.ok((await (redis[0] as Redis).pttl(keys.tenantRate('ten_a'))) > 0, 'the bucket expires');
    }
  });

  it('replicas share one bucket: together they never take more than it holds', async () => {
    const keys = new Keys(`${prefix}-shared`);
    const replicas = redis.map((r) => new RedisRateCounter(r, keys));
    // Each replica first sees an empty bucket, then its own stale view of it.
    const takes = await Promise.all(
      Array.from({ length: 60 }, (_, i) => (replicas[i % 3] as RedisRateCounter).take('ten_b', 1, 40, T0)),
    );
    assert.equal(takes.filter((d) => d.ok).length, 40);
    const later = await Promise.all(replicas.map((r) => r.take('ten_b', 1, 40, T0 + 100)));
    assert.equal(later.filter((d) => d.ok).length, 3, '100 ms at 40/s: room for 4, three asked');
    assert.equal((await (replicas[0] as RedisRateCounter).take('ten_b', 2, 40, T0 + 100)).ok, false);
    assert.equal((await (replicas[1] as RedisRateCounter).take('ten_c', 40, 40, T0)).ok, true, 'per tenant');
  });
});
