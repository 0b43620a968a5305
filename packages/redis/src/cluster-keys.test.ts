import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { type PrivateCluster, startPrivateCluster } from '@sluice/testing';
import { connectRedis, type RedisClient, type RedisTarget } from './connection.ts';
import { Keys } from './keys.ts';
import { RedisPacing } from './redis-pacing.ts';
import { RedisTickLoop } from './redis-tick-loop.ts';
import { ScheduleClient } from './schedule-client.ts';
import { markStateBuilt } from './state-built.ts';

const LEASE_MS = 300;
const PLAN = { limit: 100, periodMs: 1_000, burst: null };

/** Destinations until every shard of `keys` has one. */
function oneOnEachShard(keys: Keys): string[] {
  const byShard = new Map<number, string>();
  for (let i = 0; byShard.size < keys.shards; i++) {
    const id = `dst_${i}`;
    if (!byShard.has(keys.shardOf(id))) byShard.set(keys.shardOf(id), id);
  }
  return [...byShard.values()];
}

/**
 * On a Redis Cluster (three masters, six shards over them), every script, MULTI and pipeline
 * of ours keeps its keys in one slot: a tick loop claims and settles on every shard, the
 * schedule is read across shards, and a process's requests on many shards keep their
 * in-flight leases (one renewal pipeline per shard).
 */
describe('our keys on a Redis Cluster', () => {
  let rc: PrivateCluster;
  let redis: RedisClient;
  let target: RedisTarget;
  before(async () => {
    rc = await startPrivateCluster();
    target = { url: rc.url, cluster: true };
    redis = connectRedis(target);
  });
  after(async () => {
    redis?.disconnect();
    await rc?.stop();
  });

  it('a tick loop runs the ticks of every shard; the schedule is read across shards', async () => {
    const keys = new Keys('c-ticks', 6, { cluster: true });
    const schedule = new ScheduleClient(redis, keys);
    const ids = oneOnEachShard(keys);
    const ran: string[] = [];
    const subscriber = connectRedis(target);
    const loop = new RedisTickLoop({
      redis,
      subscriber,
      keys,
      tick: async (id) => {
        ran.push(id);
        return null;
      },
      clock: Date.now,
      onTickError: (_id, err) => assert.fail(String(err)),
    });
    try {
      await redis.set(keys.epoch(), 'ready');
      for (const id of ids) await schedule.wake(id, Date.now() + 60_000);
      assert.deepEqual([...(await schedule.scheduledAmong(ids))].sort(), [...ids].sort());
      await loop.start();
      for (const id of ids) await schedule.wake(id, Date.now());
      const deadline = Date.now() + 10_000;
      while (ran.length < ids.length && Date.now() < deadline) await sleep(20);
      assert.deepEqual([...ran].sort(), [...ids].sort(), 'each shard’s tick ran once');
      assert.equal((await schedule.scheduledAmong(ids)).size, 0, 'settled: nothing left scheduled');
    } finally {
      await loop.stop();
      subscriber.disconnect();
    }
  });

  it("a process's requests on every shard keep their in-flight leases", async () => {
    const keys = new Keys('c-lease', 6, { cluster: true });
    await markStateBuilt(redis, keys); // the state is built (no loss of Redis)
    const pacing = new RedisPacing({
      redis,
      keys,
      windowMarginMs: 5,
      arrivalBoundMs: 250,
      inFlightLeaseMs: LEASE_MS,
    });
    const ids = oneOnEachShard(keys);
    try {
      const started = [];
      for (const id of ids) {
        await pacing.published(id, ['a'], PLAN, Date.now());
        started.push(await pacing.start(id, 'a', 1_000, 30_000, Date.now()));
      }
      await sleep(LEASE_MS * 3);
      for (const id of ids)
        assert.equal((await pacing.read(id, 1_000, Date.now())).inFlight, 1, `${id}: still in flight`);
      for (const s of started) await s?.finished(Date.now());
      for (const id of ids) assert.equal((await pacing.read(id, 1_000, Date.now())).inFlight, 0);
    } finally {
      pacing.close();
    }
  });
});
