/**
 * The distributed shape on a Redis Cluster (docs/scaling.md): a private cluster on loopback
 * ports — three masters with a replica each, made by `redis-cli --cluster create` — and the
 * services with `SLUICE_REDIS_CLUSTER=true` and six schedule shards (two on each master). On it: the behavioural core (helpers/distributed-suite.ts); a run's keys on every
 * master, ours and BullMQ's alike; and a master killed mid-run with `kill -9` while its
 * replica is promoted — every event delivered, repeats only under their first `webhook-id`,
 * no window over its limit. Distributed shape only; without `redis-server` and `redis-cli`
 * it fails, saying so.
 */

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type PrivateCluster, startPrivateCluster } from '@sluice/testing';
import { withCluster } from './helpers/cluster.ts';
import {
  assertDeliveredWithinLimits,
  distributedSuite,
  fill,
  repeatsKeepTheirId,
  type Target,
} from './helpers/distributed-suite.ts';
import { SHAPE } from './helpers/shape.ts';
import { createDestination, createTenant, type EventInput, postBatches } from './helpers/sluice.ts';

const skip = SHAPE !== 'distributed' && 'distributed shape only (SLUICE_TEST_SHAPE=distributed)';

/** Six shards: their tags spread over the slots (keys.ts), two on each of the three masters. */
const SHARDS = '6';

const clusterEnv = (rc: PrivateCluster) => ({
  REDIS_URL: rc.url,
  SLUICE_REDIS_CLUSTER: 'true',
  SLUICE_SCHEDULE_SHARDS: SHARDS,
});

describe('the distributed shape on a Redis Cluster (3 masters, 3 replicas, 6 shards)', { skip }, () => {
  let rc: PrivateCluster | undefined;
  before(async () => {
    rc = await startPrivateCluster();
  });
  after(async () => {
    await rc?.stop();
  });
  const env = () => clusterEnv(rc as PrivateCluster);

  distributedSuite(env);

  it("a run's keys are on every master: the schedule's and pace's, and the delivery queues'", {
    timeout: 2 * 60_000,
  }, async () => {
    await withCluster({ limiters: 1, workers: 1, env: env() }, async (c, rcv) => {
      const tenant = await createTenant(c, c.adminToken);
      // Destinations until every shard has one (their ids are the API's).
      const shards = new Set<number>();
      const events: EventInput[] = [];
      for (let i = 0; shards.size < c.keys.shards && i < 200; i++) {
        const name = `k${i}`;
        const d = await createDestination(c, tenant.apiKey, {
          name,
          url: rcv.url(name),
          rateLimit: { limit: 50, period: 'second' },
        });
        shards.add(c.keys.shardOf(d.id));
        events.push({ type: 'cluster.keys', destinationId: d.id, payload: { n: 0, to: name } });
      }
      assert.equal(shards.size, c.keys.shards, 'a destination on every shard');
      await postBatches(c, tenant.apiKey, events);
      await rcv.waitFor(() => rcv.deliveredIds().size >= events.length, 60_000, 'every event delivered');
      const cluster = rc as PrivateCluster;
      const ours = await cluster.keysOnEachMaster(`${c.prefix}:{s*`);
      const bull = await cluster.keysOnEachMaster(`${c.prefix}-bull:{s*`);
      assert.equal(ours.size, 3, 'three masters');
      for (const [port, n] of ours) assert.ok(n > 0, `the master on ${port} holds none of our shard keys`);
      for (const [port, n] of bull) assert.ok(n > 0, `the master on ${port} holds no delivery queue's keys`);
    });
  });
});

describe('a Redis Cluster master killed mid-run (kill -9), its replica promoted', { skip }, () => {
  it('every event delivered, repeats only under their first webhook-id, every window under its limit', {
    timeout: 5 * 60_000,
  }, async () => {
    const rc = await startPrivateCluster();
    try {
      await withCluster(
        { limiters: 2, workers: 2, env: { ...clusterEnv(rc), SLUICE_LEASE_MS: '5000' } },
        async (c, rcv) => {
          const limits = [10, 20, 10, 20, 10, 20, 10, 20];
          const { targets, eventIds } = await fill(c, rcv, limits, (limit) => limit * 8);
          for (const t of targets) await rcv.setDelay(t.path, 50);
          await rcv.waitFor(
            () => rcv.deliveredIds().size >= eventIds.size / 4,
            60_000,
            'a quarter delivered',
          );
          // The master holding most of this run's keys: the one whose loss costs most.
          const held = await rc.keysOnEachMaster(`${c.prefix}*`);
          const [victim] = [...held].sort((a, b) => b[1] - a[1])[0] as [number, number];
          const killedAt = Date.now();
          await rc.kill(victim);
          const promoted = await rc.waitForFailover(victim);
          const failoverMs = Date.now() - killedAt;
          await rcv.waitFor(() => rcv.deliveredIds().size >= eventIds.size, 180_000, 'every event delivered');
          const doneMs = Date.now() - killedAt;
          assertDeliveredWithinLimits(rcv, targets as Target[], eventIds);
          const repeats = repeatsKeepTheirId(rcv);
          const restarted = c.workers
            .flatMap((w) => w.logs)
            .filter((l) => l.includes('started it again')).length;
          process.stderr.write(
            `  master :${victim} killed, :${promoted} promoted in ${failoverMs} ms, every event delivered ${doneMs} ms after the kill; ${repeats} repeats, ` +
              `each under its webhook-id; ${restarted} delivery worker(s) replaced by the watch\n`,
          );
        },
      );
    } finally {
      await rc.stop();
    }
  });
});
