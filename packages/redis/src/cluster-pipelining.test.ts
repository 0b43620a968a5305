/**
 * Auto-pipelining on a Redis Cluster (connectRedis, as the distributed shape's command
 * connection uses it): ioredis groups a turn's commands by the node of each one's first
 * argument, which for a batch script (`lua/<name>.lua`) is its number of keys. Left in the
 * auto-pipelines, a batch script whose keys live on another node than that number's slot fails
 * the whole pipeline, and every command of the turn grouped with it: connectRedis keeps them
 * (BATCH_SCRIPTS) out. Where `redis-server` or `redis-cli` is not installed it fails, saying so.
 */

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { startPrivateCluster } from '@sluice/testing';
import { Cluster } from 'ioredis';
import { connectRedis } from './connection.ts';
import { defineScripts } from './scripts.ts';

test('a batch script and a command of another node in one turn of an auto-pipelined cluster connection', {
  timeout: 120_000,
}, async () => {
  const cluster = await startPrivateCluster();
  const admin = new Cluster(cluster.seeds);
  try {
    const nodes = await cluster.nodes();
    const nodeOf = async (key: string): Promise<string> => {
      const slot = Number(await admin.cluster('KEYSLOT', key));
      const owner = nodes.find(
        (n) => n.role === 'master' && n.slots.some(([a, b]) => a <= slot && slot <= b),
      );
      return owner?.id ?? '';
    };
    // paceReadBatch over one destination takes 4 keys: ioredis groups it by the slot of "4".
    const grouped = await nodeOf('4');
    const tags = Array.from({ length: 24 }, (_, i) => `sluice-test:{s${i}}`);
    let besideIt: string | undefined;
    let elsewhere: string | undefined;
    for (const tag of tags) {
      const node = await nodeOf(tag);
      if (node === grouped) besideIt ??= tag;
      else elsewhere ??= tag;
    }
    assert.ok(besideIt && elsewhere, 'tags on two masters');
    const keys = ['queued', 'inflight', 'sends', 'pace'].map((k) => `${elsewhere}:d:x:${k}`);
    const now = Date.now();
    const turn = (redis: ReturnType<typeof connectRedis>) => {
      const batch = redis as unknown as { paceReadBatch: (...args: (string | number)[]) => Promise<unknown> };
      return Promise.all([
        redis.get(`${besideIt}:k`),
        batch.paceReadBatch(keys.length, ...keys, 50, 60_000, now, 1_000, 0),
      ]);
    };

    const target = { url: cluster.url, cluster: true };
    // ioredis as it comes, and connectRedis, which keeps BATCH_SCRIPTS out of a cluster's auto-pipelines.
    const withThem = new Cluster(cluster.seeds, { enableAutoPipelining: true });
    const without = connectRedis(target, { enableAutoPipelining: true });
    try {
      for (const redis of [withThem, without]) {
        defineScripts(redis);
        await redis.ping();
      }
      // What BATCH_SCRIPTS keeps from happening: the turn fails whole.
      await assert.rejects(turn(withThem), /same slots allocation group/);
      const [value, paces] = await turn(without);
      assert.equal(value, null);
      assert.equal((paces as unknown[]).length, 1);
    } finally {
      withThem.disconnect();
      without.disconnect();
    }
  } finally {
    admin.disconnect();
    await cluster.stop();
  }
});
