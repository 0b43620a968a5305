/**
 * The API runs the tick it wakes (docs/adr/0013): a wake that finds room now and no tick
 * running claims the tick for its caller, which runs it outside any schedule loop and
 * settles it with a kick, so the limiters' loops learn of its next tick.
 */

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { cleanup, connect, requireRedis, uniquePrefix } from '@sluice/testing';
import type { Redis } from 'ioredis';
import { Keys } from './keys.ts';
import { RedisTickLoop, type TickFn } from './redis-tick-loop.ts';
import { type ClaimedTick, Scripts } from './scripts.ts';

await requireRedis();

const ROOM = { limit: 2, periodMs: 1_000, windowMarginMs: 5, queuedExpiryMs: 60_000 };

describe('a wake that claims its tick', () => {
  let redis: Redis;
  let subscriber: Redis;
  const prefix = uniquePrefix();
  const keys = new Keys(prefix);
  let scripts: Scripts;
  const kicks: string[] = [];
  before(async () => {
    redis = connect();
    subscriber = connect();
    scripts = new Scripts(redis, keys);
    await subscriber.subscribe(keys.kickChannel());
    subscriber.on('message', (_channel: string, id: string) => kicks.push(id));
  });
  after(async () => {
    subscriber.disconnect();
    await cleanup(redis, prefix);
    redis.disconnect();
  });

  /** The kicks published so far (a published message reaches the subscriber in a moment). */
  const kicked = async (): Promise<string[]> => {
    await redis.ping();
    await new Promise((resolve) => setTimeout(resolve, 20));
    return kicks.splice(0);
  };

  it('claims a tick due now with none running, and only then', async () => {
    const now = 1_000_000;
    const first = await scripts.wakeForWork('a', now, ROOM, 10_000);
    assert.deepEqual(first, { at: now, lease: String(now + 10_000) }, 'room now: claimed');
    assert.equal(await redis.zscore(keys.schedule(0), 'a'), null, 'not left in the schedule');
    assert.equal(await redis.zscore(keys.leases(0), 'a'), String(now + 10_000));
    assert.deepEqual(await kicked(), [], 'no limiter kicked: the caller runs it');

    const again = await scripts.wakeForWork('a', now + 1, ROOM, 10_000);
    assert.deepEqual(again, { at: now + 1, lease: null }, 'its tick is running: a wake only');
    assert.equal(await redis.zscore(keys.woken(0), 'a'), String(now + 1), 'remembered for its settle');

    assert.deepEqual(await scripts.settleKick('a', first.lease as string, now + 1_000), {
      state: 'scheduled',
      at: now + 1,
    });
    assert.deepEqual(await kicked(), ['a'], 'the head of the schedule: the limiters are kicked');

    // No kick for a tick behind the head: the limiters' loops already wake sooner.
    const b = await scripts.wakeForWork('b', now, ROOM, 10_000);
    assert.deepEqual(await scripts.settleKick('b', b.lease as string, now + 5_000), {
      state: 'scheduled',
      at: now + 5_000,
    });
    assert.deepEqual(await kicked(), []);
    assert.deepEqual(await scripts.settleKick('b', b.lease as string, null), { state: 'lost' });
  });

  it('a full window is woken at its room, not claimed', async () => {
    const now = 2_000_000;
    // Two requests of the last 1 s may still arrive: a limit of 2 has no room until they leave.
    await redis.zadd(keys.sends('full'), now - 500, 'att_1', now - 400, 'att_2');
    const woken = await scripts.wakeForWork('full', now, ROOM, 10_000);
    assert.equal(woken.lease, null);
    assert.equal(woken.at, now - 500 + 1_005, 'when the older send leaves the window');
    assert.equal(await redis.zscore(keys.schedule(0), 'full'), String(woken.at));
    assert.equal(await redis.zscore(keys.leases(0), 'full'), null);
    const plain = await scripts.wakeForWork('plain', now, ROOM);
    assert.equal(plain.lease, null, 'no lease asked: a wake only');
    assert.equal(await redis.zscore(keys.schedule(0), 'plain'), String(now));
  });
});

describe('RedisTickLoop.runClaimed', () => {
  async function setUp(tick: TickFn) {
    const prefix = uniquePrefix();
    const keys = new Keys(prefix);
    const connections = [connect(), connect(), connect()] as [Redis, Redis, Redis];
    const options = {
      keys,
      tick,
      clock: Date.now,
      onTickError: (_id: string, err: unknown) => assert.fail(String(err)),
    };
    // A limiter that polls once a minute: a tick it runs sooner came from a kick.
    const limiter = new RedisTickLoop({
      ...options,
      redis: connections[0],
      subscriber: connections[1],
      maxIdleMs: 60_000,
    });
    // The API's: no loops, only the ticks its wakes claim.
    const api = new RedisTickLoop({ ...options, redis: connections[2] });
    const redis = connect();
    await limiter.start();
    const close = async (): Promise<void> => {
      await api.stop();
      await limiter.stop();
      for (const c of connections) c.disconnect();
      await cleanup(redis, prefix);
      redis.disconnect();
    };
    return { keys, redis, limiter, api, close };
  }

  const until = async (done: () => boolean, ms: number): Promise<void> => {
    const deadline = Date.now() + ms;
    while (!done() && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
  };

  it('runs the claimed tick here; a limiter runs the next one when it is due, kicked by the settle', async () => {
    const ran: string[] = [];
    let runner = 'api';
    const s = await setUp(async () => {
      ran.push(runner);
      runner = 'limiter';
      return ran.length === 1 ? Date.now() + 50 : null;
    });
    try {
      await s.redis.set(s.keys.epoch(), 'ready');
      const { lease } = await s.api.scripts.wakeForWork('d', Date.now(), ROOM, s.api.leaseMs);
      assert.ok(lease, 'claimed');
      const claimed: ClaimedTick = { destinationId: 'd', due: Date.now(), lease, takenOver: false };
      s.api.runClaimed(claimed, await s.api.ready());
      await until(() => ran.length === 2, 5_000);
      assert.deepEqual(
        ran,
        ['api', 'limiter'],
        'the next tick ran within 5 s, not after the minute-long sleep',
      );
      await until(() => false, 50);
      assert.equal(await s.redis.zcard(s.keys.schedule(0)), 0, 'it shut down');
      assert.equal(await s.redis.zcard(s.keys.leases(0)), 0, 'no lease left behind');
    } finally {
      await s.close();
    }
  });

  it('the state not ready, or stopped: the claimed tick goes back untouched, and a limiter runs it', async () => {
    const ran: string[] = [];
    const s = await setUp(async (id) => {
      ran.push(id);
      return null;
    });
    try {
      const claim = async (id: string): Promise<ClaimedTick> => {
        const due = Date.now();
        const { lease } = await s.api.scripts.wakeForWork(id, due, ROOM, s.api.leaseMs);
        assert.ok(lease, `${id} claimed`);
        return { destinationId: id, due, lease, takenOver: false };
      };
      const early = await claim('early');
      assert.equal(await s.api.ready(), false, 'no epoch yet: the state is being built');
      s.api.runClaimed(early, false);
      await until(() => false, 100);
      assert.deepEqual(ran, [], 'nothing runs before the state is ready');
      assert.equal(await s.redis.zscore(s.keys.schedule(0), 'early'), String(early.due), 'due as it was');
      await s.redis.set(s.keys.epoch(), 'ready');
      const late = await claim('late');
      await s.api.stop();
      s.api.runClaimed(late, true);
      await s.limiter.scripts.wake('kick', Date.now()); // the limiter looks now
      await s.redis.publish(s.keys.kickChannel(), '*');
      await until(() => ran.length === 3, 5_000);
      assert.deepEqual(ran.sort(), ['early', 'kick', 'late'], 'the limiter ran them');
    } finally {
      await s.close();
    }
  });
});
