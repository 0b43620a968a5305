/**
 * Redis can be lost (docs/design.md I1, docs/adr/0002): the cluster runs on a Redis server of its
 * own, which is emptied with FLUSHALL mid-run and, in a second test, restarted with nothing
 * kept. The sweeper rebuilds the schedule and the pace state from Postgres: every event is
 * delivered, repeats keep their webhook-id, and the limit still holds at the receiver.
 * Distributed shape only; without a `redis-server` binary it fails, saying so.
 */

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { startPrivateRedis } from '@sluice/testing';
import { type Cluster, startCluster } from './helpers/cluster.ts';
import { assertNoLeaks } from './helpers/leaks.ts';
import { type Receiver, sleep, startReceiver } from './helpers/receiver.ts';
import { SHAPE } from './helpers/shape.ts';
import { createDestination, createTenant, type EventInput, postBatches } from './helpers/sluice.ts';
import { describeWindow, worstWindow } from './helpers/window.ts';

const skip = SHAPE !== 'distributed' && 'distributed shape only (SLUICE_TEST_SHAPE=distributed)';

const LIMITS = [10, 20, 10, 20];

async function run(lose: (redis: { flush(): Promise<void>; restart(): Promise<void> }) => Promise<void>) {
  const server = await startPrivateRedis();
  const rcv: Receiver = await startReceiver();
  let c: Cluster | undefined;
  try {
    c = await startCluster({
      limiters: 2,
      workers: 2,
      env: { REDIS_URL: server.url, SLUICE_SWEEP_INTERVAL_MS: '500' },
    });
    const tenant = await createTenant(c, c.adminToken);
    const targets: { name: string; id: string; path: string; limit: number }[] = [];
    for (const [i, limit] of LIMITS.entries()) {
      const name = `r${i}`;
      const d = await createDestination(c, tenant.apiKey, {
        name,
        url: rcv.url(name),
        rateLimit: { limit, period: 'second' },
      });
      targets.push({ name, id: d.id, path: rcv.path(name), limit });
      await rcv.setDelay(rcv.path(name), 100);
    }
    const events: EventInput[] = targets.flatMap((t) =>
      Array.from({ length: t.limit * 6 }, (_, n) => ({
        type: 'loss.test',
        destinationId: t.id,
        payload: { n, to: t.name },
      })),
    );
    const accepted = await postBatches(c, tenant.apiKey, events);
    await rcv.waitFor(() => rcv.deliveredIds().size >= accepted.length / 4, 60_000, 'a quarter delivered');
    const cluster = c;
    await lose({
      flush: async () => {
        await cluster.redis.flushall();
      },
      restart: async () => {
        await server.kill();
        await sleep(500);
        await server.start();
      },
    });
    await rcv.waitFor(() => rcv.deliveredIds().size >= accepted.length, 180_000, 'every event delivered');
    for (const t of targets) {
      const worst = worstWindow(rcv.times(t.path), 1_000);
      assert.ok(
        worst.count <= t.limit,
        `${t.name}: ${describeWindow(worst, 1_000, rcv.times(t.path)[0] ?? 0)} > ${t.limit}/s`,
      );
    }
    const ids = new Map<string, Set<string>>();
    for (const a of rcv.arrivals()) {
      const { to, n } = JSON.parse(a.body) as { to: string; n: number };
      const set = ids.get(`${to}#${n}`) ?? new Set<string>();
      set.add(String(a.headers['webhook-id']));
      ids.set(`${to}#${n}`, set);
    }
    assert.equal(ids.size, accepted.length, 'every event arrived');
    for (const [payload, set] of ids)
      assert.equal(set.size, 1, `${payload} arrived under ${set.size} webhook-ids`);
  } finally {
    await c?.close();
    await rcv.close();
    await server.stop();
    await assertNoLeaks();
  }
}

describe('Redis can be lost', { skip }, () => {
  it('FLUSHALL mid-run: nothing lost, everything delivered, the limit holds', {
    timeout: 5 * 60_000,
  }, async () => {
    await run((redis) => redis.flush());
  });

  it('a Redis restart with nothing kept: nothing lost, the limit holds', {
    timeout: 5 * 60_000,
  }, async () => {
    await run((redis) => redis.restart());
  });
});
