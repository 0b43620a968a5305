import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { cleanup, connect, requireRedis, uniquePrefix } from '@sluice/testing';
import type { Redis } from 'ioredis';
import { Keys } from './keys.ts';
import { RedisPacing } from './redis-pacing.ts';
import { RedisTickLoop, type TickFn } from './redis-tick-loop.ts';
import { ScheduleClient } from './schedule-client.ts';
import { Scripts } from './scripts.ts';

await requireRedis();

describe('the Redis schedule scripts', () => {
  let redis: Redis;
  const prefix = uniquePrefix();
  const keys = new Keys(prefix);
  let scripts: Scripts;
  before(() => {
    redis = connect();
    scripts = new Scripts(redis, keys);
  });
  after(async () => {
    await cleanup(redis, prefix);
    redis.disconnect();
  });

  it('scheduledAmong answers as isScheduled does, for many destinations in a few round trips', async () => {
    const client = new ScheduleClient(redis, keys);
    await scripts.wake('among-due', 1_000);
    await scripts.wake('among-leased', 1_000);
    const { ticks } = await scripts.claimTicks(0, 1_000, 30_000, 100);
    assert.ok(ticks.some((t) => t.destinationId === 'among-leased'));
    await scripts.wake('among-due', 5_000); // claimed too: schedule it again, so one is due, one leased
    await scripts.settle('among-due', ticks.find((t) => t.destinationId === 'among-due')?.lease ?? '', 5_000);
    const ids = ['among-due', 'among-leased', 'among-none'];
    const among = await client.scheduledAmong(ids, 2);
    assert.deepEqual([...among].sort(), ['among-due', 'among-leased']);
    for (const id of ids) assert.equal(await client.isScheduled(id), among.has(id), id);
    await scripts.settle(
      'among-leased',
      ticks.find((t) => t.destinationId === 'among-leased')?.lease ?? '',
      null,
    );
    await scripts.settle('among-due', '0', null);
    await redis.zrem(keys.schedule(0), 'among-due');
  });

  it('wake schedules sooner only', async () => {
    await scripts.wake('d1', 5_000);
    await scripts.wake('d1', 9_000);
    assert.equal(await redis.zscore(keys.schedule(0), 'd1'), '5000');
    await scripts.wake('d1', 3_000);
    assert.equal(await redis.zscore(keys.schedule(0), 'd1'), '3000');
  });

  it('claims only due ticks, each once, and leases them', async () => {
    for (let i = 0; i < 100; i++) await scripts.wake(`c${i}`, 10_000 + i);
    await scripts.wake('later', 50_000);
    const claims = await Promise.all(
      Array.from({ length: 5 }, () => scripts.claimTicks(0, 20_000, 1_000, 40)),
    );
    const ids = claims.flatMap((c) => c.ticks.map((t) => t.destinationId)).filter((id) => id.startsWith('c'));
    assert.equal(ids.length, 100);
    assert.equal(new Set(ids).size, 100, 'no tick claimed twice');
    assert.equal(await redis.zscore(keys.leases(0), 'c7'), '21000');
    assert.equal(await redis.zscore(keys.schedule(0), 'c7'), null);
    assert.equal(await redis.zscore(keys.schedule(0), 'later'), '50000');
  });

  it('settle reschedules, shuts down, and honours a wake during the tick', async () => {
    await scripts.wake('s1', 1_000);
    await scripts.wake('s2', 1_000);
    await scripts.wake('s3', 1_000);
    const { ticks } = await scripts.claimTicks(0, 1_000, 5_000, 1_000);
    const lease = (id: string) => ticks.find((t) => t.destinationId === id)?.lease as string;
    assert.deepEqual(await scripts.settle('s1', lease('s1'), 2_000), { state: 'scheduled', at: 2_000 });
    assert.equal(await redis.zscore(keys.schedule(0), 's1'), '2000');
    assert.deepEqual(await scripts.settle('s2', lease('s2'), null), { state: 'removed' });
    assert.equal(await redis.zscore(keys.schedule(0), 's2'), null);
    // A wake while s3's tick runs: recorded, and wins over the tick's shutdown.
    await scripts.wake('s3', 1_500);
    assert.equal(await redis.zscore(keys.schedule(0), 's3'), null, 'not scheduled while leased');
    assert.deepEqual(await scripts.settle('s3', lease('s3'), null), { state: 'scheduled', at: 1_500 });
    assert.equal(await redis.zscore(keys.schedule(0), 's3'), '1500');
    assert.equal(await redis.zscore(keys.leases(0), 's3'), null);
  });

  it('takes over an expired lease; the late settle of the old one changes nothing', async () => {
    await scripts.wake('x', 1_000);
    const first = await scripts.claimTicks(0, 1_000, 100, 1_000);
    const old = first.ticks.find((t) => t.destinationId === 'x');
    assert.ok(old);
    assert.equal(old.takenOver, false, 'a due tick is not a takeover');
    const second = await scripts.claimTicks(0, 1_200, 100, 1_000);
    const taken = second.ticks.find((t) => t.destinationId === 'x');
    assert.ok(taken, 'the expired lease was claimed again');
    assert.equal(taken.takenOver, true, 'and said so');
    assert.deepEqual(await scripts.settle('x', old.lease, 5_000), { state: 'lost' });
    assert.deepEqual(await scripts.settle('x', taken.lease, null), { state: 'removed' });
  });
});

/** `n` replicas of one schedule, each on connections of its own (`disconnect` closes them). */
function replicasOf(keys: Keys, n: number, tick: TickFn, maxIdleMs: number) {
  const connections: Redis[] = [];
  const open = (): Redis => {
    const c = connect();
    connections.push(c);
    return c;
  };
  const replicas = Array.from(
    { length: n },
    () =>
      new RedisTickLoop({
        redis: open(),
        subscriber: open(),
        keys,
        tick,
        clock: Date.now,
        onTickError: (_id, err) => assert.fail(String(err)),
        maxIdleMs,
      }),
  );
  const disconnect = (): void => {
    for (const c of connections) c.disconnect();
  };
  return { replicas, disconnect };
}

describe('RedisTickLoop with two replicas', () => {
  it('runs every tick once at a time, reschedules, and empties the schedule', async () => {
    const prefix = uniquePrefix();
    const keys = new Keys(prefix);
    const redis = connect();
    const running = new Set<string>();
    const runs = new Map<string, number>();
    let overlaps = 0;
    const tick = async (id: string): Promise<number | null> => {
      if (running.has(id)) overlaps++;
      running.add(id);
      await new Promise((resolve) => setTimeout(resolve, Math.random() * 5));
      running.delete(id);
      const n = (runs.get(id) ?? 0) + 1;
      runs.set(id, n);
      return n < 3 ? Date.now() + 5 : null;
    };
    const { replicas, disconnect } = replicasOf(keys, 2, tick, 20);
    try {
      await redis.set(keys.epoch(), 'ready'); // the state is built (no Redis loss to repair)
      for (const r of replicas) await r.start();
      for (let i = 0; i < 50; i++) await (replicas[i % 2] as RedisTickLoop).wake(`d${i}`, Date.now());
      const deadline = Date.now() + 10_000;
      while ([...runs.values()].filter((n) => n === 3).length < 50 && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      assert.equal(overlaps, 0, 'a destination ticked twice at once');
      assert.deepEqual(
        [...runs.entries()].filter(([, n]) => n !== 3),
        [],
        'every destination ran exactly 3 ticks',
      );
      // A tick counts its run before its settle returns the lease: the last settles may still be on their way.
      while ((await redis.zcard(keys.leases(0))) > 0 && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      assert.equal(await redis.zcard(keys.schedule(0)), 0);
      assert.equal(await redis.zcard(keys.leases(0)), 0);
      assert.equal(await new ScheduleClient(redis, keys).isScheduled('d0'), false);
    } finally {
      for (const r of replicas) await r.stop();
      disconnect();
      await cleanup(redis, prefix);
      redis.disconnect();
    }
  });

  it('a tick slower than its lease keeps it: the other replica does not run it beside itself', async () => {
    const prefix = uniquePrefix();
    const keys = new Keys(prefix);
    const redis = connect();
    const connections = [connect(), connect()];
    let running = 0;
    let most = 0;
    let runs = 0;
    const replicas = connections.map(
      (connection) =>
        new RedisTickLoop({
          redis: connection,
          keys,
          // Four leases long: a claim waiting on a slow store, in a replica that is alive.
          tick: async () => {
            runs++;
            running++;
            most = Math.max(most, running);
            await new Promise((resolve) => setTimeout(resolve, 800));
            running--;
            return null;
          },
          clock: Date.now,
          onTickError: (_id, err) => assert.fail(String(err)),
          leaseMs: 200,
          maxIdleMs: 20,
        }),
    );
    try {
      await redis.set(keys.epoch(), 'ready');
      await (replicas[0] as RedisTickLoop).scripts.wake('slow', Date.now());
      for (const r of replicas) await r.start();
      const deadline = Date.now() + 10_000;
      while ((runs === 0 || running > 0) && Date.now() < deadline)
        await new Promise((resolve) => setTimeout(resolve, 20));
      await new Promise((resolve) => setTimeout(resolve, 300)); // a late second claim would show now
      assert.equal(most, 1, 'the tick ran on one replica at a time');
      assert.equal(runs, 1, 'and once: its settle took it out of the schedule');
      assert.equal(await redis.zcard(keys.leases(0)), 0, 'the settle matched the renewed lease');
    } finally {
      for (const r of replicas) await r.stop();
      for (const c of connections) c.disconnect();
      await cleanup(redis, prefix);
      redis.disconnect();
    }
  });

  it('fences a tick that stalled past its lease: its successor counts its deliveries, it does not', async () => {
    const prefix = uniquePrefix();
    const keys = new Keys(prefix);
    const redis = connect();
    const connections = [connect(), connect()];
    const pacing = new RedisPacing({
      redis,
      keys,
      windowMarginMs: 5,
      arrivalBoundMs: 250,
      queuedExpiryMs: 600_000,
    });
    const plan = { limit: 10, periodMs: 1_000, burst: null };
    let successorDone = (): void => undefined;
    const successor = new Promise<void>((resolve) => {
      successorDone = resolve;
    });
    const outcomes: string[] = [];
    const takenOver: string[][] = [];
    let runs = 0;
    const tick: TickFn = async (id, _due, fence) => {
      const run = ++runs;
      if (run === 1) {
        // As if its replica froze for a whole lease: the lease has expired, and another tick
        // of the destination runs before this one goes on.
        await redis.zadd(keys.leases(0), 0, id);
        await successor;
      }
      try {
        await pacing.published(id, [`dlv_${run}`], plan, Date.now(), { fence: await fence() });
        outcomes.push(`${run}: counted`);
      } catch (err) {
        outcomes.push(`${run}: ${(err as Error).name}`);
      }
      if (run === 2) successorDone();
      return null;
    };
    const replicas = connections.map(
      (connection) =>
        new RedisTickLoop({
          redis: connection,
          keys,
          tick,
          clock: Date.now,
          onTickError: (_id, err) => assert.fail(String(err)),
          onTakeover: (ids) => takenOver.push(ids),
          leaseMs: 300,
          maxIdleMs: 20,
        }),
    );
    try {
      await redis.set(keys.epoch(), 'ready');
      await (replicas[0] as RedisTickLoop).scripts.wake('d', Date.now());
      for (const r of replicas) await r.start();
      const deadline = Date.now() + 10_000;
      while (outcomes.length < 2 && Date.now() < deadline)
        await new Promise((resolve) => setTimeout(resolve, 20));
      assert.deepEqual(outcomes.sort(), ['1: LeaseLostError', '2: counted']);
      assert.deepEqual(
        await redis.zrange(keys.queued('d'), '0', '-1'),
        ['dlv_2'],
        'only the lease holder counted',
      );
      assert.deepEqual(takenOver, [['d']], 'the successor was told it took the tick over');
    } finally {
      for (const r of replicas) await r.stop();
      for (const c of connections) c.disconnect();
      await cleanup(redis, prefix);
      redis.disconnect();
    }
  });

  it('a settle sooner than the loop means to look is run then, not after the longest sleep', async () => {
    const prefix = uniquePrefix();
    const keys = new Keys(prefix);
    const redis = connect();
    const connections = [connect()];
    const ranAt: number[] = [];
    // No subscriber: nothing but the replica's own settle can cut its sleep short.
    const schedule = new RedisTickLoop({
      redis: connections[0] as Redis,
      keys,
      tick: async () => {
        ranAt.push(Date.now());
        return ranAt.length < 3 ? Date.now() + 10 : null;
      },
      clock: Date.now,
      onTickError: (_id, err) => assert.fail(String(err)),
      maxIdleMs: 60_000,
    });
    try {
      await redis.set(keys.epoch(), 'ready');
      await schedule.scripts.wake('d', Date.now());
      await schedule.start();
      const deadline = Date.now() + 10_000;
      while (ranAt.length < 3 && Date.now() < deadline)
        await new Promise((resolve) => setTimeout(resolve, 10));
      assert.equal(ranAt.length, 3, 'each tick ran when its settle scheduled it, within the longest sleep');
    } finally {
      await schedule.stop();
      for (const c of connections) c.disconnect();
      await cleanup(redis, prefix);
      redis.disconnect();
    }
  });
});

describe('RedisTickLoop: kicks instead of the longest sleep', () => {
  /** Replicas that poll only once a minute: anything sooner than that came from a kick. */
  async function sleepyReplicas(n: number, tick: TickFn) {
    const prefix = uniquePrefix();
    const keys = new Keys(prefix);
    const redis = connect();
    const { replicas, disconnect } = replicasOf(keys, n, tick, 60_000);
    const close = async (): Promise<void> => {
      for (const r of replicas) await r.stop();
      disconnect();
      await cleanup(redis, prefix);
      redis.disconnect();
    };
    return { keys, redis, replicas, client: new ScheduleClient(redis, keys), close };
  }

  const until = async (done: () => boolean, ms: number): Promise<void> => {
    const deadline = Date.now() + ms;
    while (!done() && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
  };

  it('a replica that stops kicks the others for the ticks it settled last', async () => {
    let release = (): void => undefined;
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    const ranBy: string[] = [];
    let first = true;
    const tick: TickFn = async () => {
      if (first) {
        first = false;
        ranBy.push('first');
        await held; // running while its replica stops
        return Date.now() + 50;
      }
      ranBy.push('next');
      return null;
    };
    const s = await sleepyReplicas(2, tick);
    try {
      await s.redis.set(s.keys.epoch(), 'ready');
      const [a, b] = s.replicas as [RedisTickLoop, RedisTickLoop];
      await a.start();
      await a.wake('d', Date.now());
      await until(() => ranBy.length === 1, 5_000);
      await b.start(); // looks once, finds nothing due, sleeps for a minute
      await new Promise((resolve) => setTimeout(resolve, 100));
      const stopping = a.stop();
      release();
      await stopping;
      await until(() => ranBy.length === 2, 5_000);
      assert.deepEqual(ranBy, ['first', 'next'], 'the other replica ran the settled tick within 5 s');
    } finally {
      release();
      await s.close();
    }
  });

  it('a kick ends the sleep of a loop that found the state not ready', async () => {
    const ran: string[] = [];
    const s = await sleepyReplicas(1, async (id) => {
      ran.push(id);
      return null;
    });
    try {
      await s.client.wake('d', Date.now());
      await (s.replicas[0] as RedisTickLoop).start(); // no epoch: puts the tick back, sleeps
      await new Promise((resolve) => setTimeout(resolve, 200));
      assert.deepEqual(ran, [], 'nothing runs before the state is ready');
      await s.redis.set(s.keys.epoch(), 'ready');
      await s.client.kick();
      await until(() => ran.length === 1, 5_000);
      assert.deepEqual(ran, ['d']);
    } finally {
      await s.close();
    }
  });
});

describe('RedisTickLoop kicks with shards', () => {
  it("a kick naming a destination wakes only its shard's loop; `*` wakes every loop", async () => {
    const keys = new Keys(uniquePrefix(), 4);
    const redis = connect();
    const subscriber = connect();
    const loop = new RedisTickLoop({
      redis,
      subscriber,
      keys,
      tick: async () => null,
      clock: Date.now,
      onTickError: (_id, err) => assert.fail(String(err)),
      maxIdleMs: 60_000,
    });
    const claims = [0, 0, 0, 0];
    const claimTicks = loop.scripts.claimTicks.bind(loop.scripts);
    loop.scripts.claimTicks = (shard, ...rest) => {
      claims[shard] = (claims[shard] ?? 0) + 1;
      return claimTicks(shard, ...rest);
    };
    const settle = () => new Promise((r) => setTimeout(r, 300));
    try {
      await redis.set(keys.epoch(), 'ready');
      await loop.start();
      await settle();
      assert.deepEqual(claims, [1, 1, 1, 1], 'each loop claims once, then sleeps');
      const id = ['a', 'b', 'c', 'd', 'e', 'f', 'g']
        .map((x) => `dst_${x}`)
        .find((x) => keys.shardOf(x) === 2)!;
      await redis.publish(keys.kickChannel(), id);
      await settle();
      assert.deepEqual(claims, [1, 1, 2, 1], 'only the named destination’s shard looks');
      await redis.publish(keys.kickChannel(), '*');
      await settle();
      assert.deepEqual(claims, [2, 2, 3, 2], 'every shard looks');
    } finally {
      await loop.stop();
      await cleanup(redis, keys.prefix);
      redis.disconnect();
      subscriber.disconnect();
    }
  });
});
