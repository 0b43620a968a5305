import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { ClaimedDelivery } from '@sluice/store';
import {
  claimedDelivery,
  cleanup,
  connect,
  REDIS_TARGET,
  requireRedis,
  uniquePrefix,
  until,
} from '@sluice/testing';
import { bullConnection } from './connection.ts';
import { BullPublisher } from './delivery-queue.ts';
import { type DeliveryWorkerOptions, startDeliveryWorker } from './delivery-worker.ts';
import { Keys } from './keys.ts';

await requireRedis();

const connection = bullConnection(REDIS_TARGET);

/** A worker over every shard of `keys` that records what it ran. */
function worker(keys: Keys, more: Partial<DeliveryWorkerOptions> = {}) {
  const ran: ClaimedDelivery[] = [];
  const workers = startDeliveryWorker({
    connection,
    keys,
    concurrency: 4,
    lockMs: 4_000,
    stalledIntervalMs: 1_000,
    waiting: async () => 0,
    stillClaimed: async (ds) => new Set(ds.map((d) => d.id)),
    run: async (d) => {
      ran.push(d);
      return {};
    },
    onPartialFailure: () => assert.fail('nothing fails'),
    ...more,
  });
  return { workers, ran };
}

async function withKeys(shards: number, body: (keys: Keys, publisher: BullPublisher) => Promise<void>) {
  const keys = new Keys(uniquePrefix(), shards);
  const publisher = new BullPublisher({ connection, keys });
  try {
    await body(keys, publisher);
  } finally {
    await publisher.close();
    const redis = connect();
    await cleanup(redis, keys.prefix);
    redis.disconnect();
  }
}

describe('the delivery queue split by shard', () => {
  it("puts a destination's jobs in its shard's queue, under the shard's hash tag; one worker drains them all", async () => {
    await withKeys(4, async (keys, publisher) => {
      const destinations = Array.from({ length: 12 }, (_, i) => `dst_${i}`);
      const shards = new Set(destinations.map((d) => keys.shardOf(d)));
      assert.ok(shards.size > 1, 'the destinations span shards');
      for (const d of destinations)
        await publisher.publish(d, [claimedDelivery(1, d), claimedDelivery(2, d)]);
      for (const shard of keys.allShards()) {
        assert.equal(keys.bullPrefix(shard), `${keys.prefix}-bull:${keys.hashTag(shard)}`);
        const jobs = await publisher.queues[shard]!.getJobs(['wait'], 0, -1);
        const held = jobs.flatMap((j) => ('deliveries' in j.data ? j.data.deliveries : [j.data]));
        assert.ok(
          held.every((d) => keys.shardOf(d.destinationId) === shard),
          `shard ${shard}'s queue holds only its destinations`,
        );
        assert.equal(held.length, destinations.filter((d) => keys.shardOf(d) === shard).length * 2);
      }
      const redis = connect();
      try {
        const bullKeys = await redis.keys(`${keys.prefix}-bull*`);
        assert.ok(bullKeys.length > 0);
        assert.ok(
          bullKeys.every((k) => /^[^{]*\{s\d+\.\d+\}/.test(k)),
          'every BullMQ key carries a shard tag',
        );
      } finally {
        redis.disconnect();
      }
      assert.equal(
        await publisher.depth(),
        (await Promise.all(publisher.queues.map((q) => q.count()))).reduce((a, b) => a + b),
      );
      const { workers, ran } = worker(keys);
      try {
        await until(() => ran.length === 24, 'every delivery of every shard');
        assert.equal(new Set(ran.map((d) => d.id)).size, 24, 'each once');
      } finally {
        await workers.close();
      }
    });
  });

  it('one shard on one server keeps the untagged prefix of before', () => {
    assert.equal(new Keys('sluice').bullPrefix(0), 'sluice-bull');
    assert.equal(new Keys('sluice', 1, { cluster: true }).bullPrefix(0), 'sluice-bull:{s0}');
  });

  it('a shard whose worker takes nothing while jobs wait gets a new worker, which drains them', async () => {
    await withKeys(2, async (keys, publisher) => {
      const stuck: number[] = [];
      // The queue says shard 1 has jobs waiting while none comes: its worker looks stuck.
      let waitingOn1 = 1;
      const { workers, ran } = worker(keys, {
        watchMs: 50,
        waiting: async (shard) => (shard === 1 ? waitingOn1 : 0),
        onStuck: (shard) => {
          stuck.push(shard);
          waitingOn1 = 0;
        },
      });
      try {
        await until(() => stuck.length > 0, 'the watch');
        assert.deepEqual(stuck, [1], 'only the shard with work waiting');
        const d = ['a', 'b', 'c', 'd', 'e', 'f'].map((x) => `dst_${x}`).find((x) => keys.shardOf(x) === 1)!;
        await publisher.publish(d, [claimedDelivery(1, d)]);
        await until(() => ran.length === 1, 'the new worker runs the job');
      } finally {
        await workers.close();
      }
    });
  });
});
