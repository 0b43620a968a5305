import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { mulberry32 } from '@sluice/core';
import { type AttemptPace, MemoryPacing } from '@sluice/engine';
import type { Redis } from 'ioredis';
import { Pacer } from '../../engine/src/pacer.ts';
import { Keys } from './keys.ts';
import { RedisPacing } from './redis-pacing.ts';
import { cleanup, connect, redisAvailable, uniquePrefix } from './test-redis.ts';

const skip = !(await redisAvailable());
const OPTIONS = { windowMarginMs: 5, arrivalBoundMs: 250 };

const atOnce = (fn: () => void) => {
  fn();
  return () => undefined;
};

describe('RedisPacing', { skip }, () => {
  let redis: Redis;
  const prefix = uniquePrefix();
  before(() => {
    redis = connect();
  });
  after(async () => {
    await cleanup(redis, prefix);
    redis.disconnect();
  });

  it('reads and schedules exactly as the single box does, over random publishes, starts and finishes', async () => {
    for (let seed = 1; seed <= 6; seed++) {
      const random = mulberry32(seed);
      const keys = new Keys(`${prefix}-${seed}`);
      // On this fake clock a write's lowering goes at once (in real time it waits for the bound).
      const remote = new RedisPacing({ redis, keys, ...OPTIONS, claimLeaseMs: 600_000, later: atOnce });
      const local = new MemoryPacing(
        new Pacer({ marginMs: OPTIONS.windowMarginMs, arrivalBoundMs: OPTIONS.arrivalBoundMs }),
      );
      const d = 'dst_x';
      const periodMs = 1_000;
      const limit = 1 + Math.floor(random() * 20);
      let now = 1_000_000;
      await local.read(d, periodMs, now); // creates the destination's pace
      const queued: string[] = [];
      const running: { r: AttemptPace; l: AttemptPace; writtenAt?: number }[] = [];
      let n = 0;
      for (let step = 0; step < 300; step++) {
        now += Math.floor(random() * 60);
        const roll = random();
        if (roll < 0.3) {
          const ids = Array.from({ length: 1 + Math.floor(random() * 3) }, () => `dlv_${n++}`);
          queued.push(...ids);
          const plan = { limit, periodMs };
          const [rr, lr] = [
            await remote.published(d, ids, plan, now),
            await local.published(d, ids, plan, now),
          ];
          assert.equal(rr, lr, `roomAt after publishing, seed ${seed} step ${step}`);
        } else if (roll < 0.6 && queued.length > 0) {
          const id = queued.shift() as string;
          running.push({
            r: await remote.start(d, id, periodMs, 60_000, now),
            l: await local.start(d, id, periodMs, 60_000, now),
          });
        } else if (roll < 0.75 && running.length > 0) {
          const a = running[Math.floor(random() * running.length)];
          if (a && a.writtenAt === undefined) {
            a.writtenAt = now;
            a.r.written(now);
            a.l.written(now);
          }
        } else if (running.length > 0) {
          const i = running.findIndex((a) => a.writtenAt !== undefined);
          if (i >= 0) {
            const [a] = running.splice(i, 1);
            await a?.r.finished(now);
            await a?.l.finished(now);
          }
        }
        await redis.ping(); // let the fire-and-forget `written` land
        const [r, l] = [await remote.read(d, periodMs, now), await local.read(d, periodMs, now)];
        // An attempt in flight not yet written counts until it finishes locally, until its
        // timeout remotely: the same while no timeout passes, as here.
        assert.deepEqual(r, l, `seed ${seed} step ${step}`);
        const [rr, lr] = [
          await remote.published(d, [], { limit, periodMs }, now),
          await local.published(d, [], { limit, periodMs }, now),
        ];
        assert.equal(rr, lr, `roomAt, seed ${seed} step ${step}`);
      }
    }
  });

  it('lowers a send to its write time + the bound only when the response is not in by then', async () => {
    const keys = new Keys(`${prefix}-written`);
    const pacing = new RedisPacing({ redis, keys, ...OPTIONS, arrivalBoundMs: 50, claimLeaseMs: 10_000 });
    const score = (token: string) => redis.zscore(keys.sends('d'), token);
    const tokenOf = async (id: string) =>
      ((await redis.zrange(keys.sends('d'), '0', '-1')) as string[]).find((m) =>
        m.startsWith(`${id}:`),
      ) as string;
    await pacing.published('d', ['fast', 'slow'], { limit: 10, periodMs: 1_000 }, 0);
    const fast = await pacing.start('d', 'fast', 1_000, 3_000, 100);
    const slow = await pacing.start('d', 'slow', 1_000, 3_000, 100);
    fast.written(110);
    slow.written(110);
    await fast.finished(120); // in before the bound: its write time is never sent
    await new Promise((resolve) => setTimeout(resolve, 120));
    assert.equal(await score(await tokenOf('fast')), '120', 'lowered by the response only');
    assert.equal(await score(await tokenOf('slow')), '160', 'lowered to write + bound once the bound passed');
    await slow.finished(5_000);
    assert.equal(await score(await tokenOf('slow')), '160', 'a later response never raises it');
  });

  it('forgets what a dead worker or a lost publish left, once it cannot matter', async () => {
    const keys = new Keys(`${prefix}-expiry`);
    const pacing = new RedisPacing({ redis, keys, ...OPTIONS, claimLeaseMs: 10_000 });
    await pacing.published('d', ['lost'], { limit: 10, periodMs: 1_000 }, 0);
    await pacing.published('d', ['started'], { limit: 10, periodMs: 1_000 }, 0);
    await pacing.start('d', 'started', 1_000, 3_000, 100); // its worker dies: never finishes
    assert.deepEqual(await pacing.read('d', 1_000, 200), { queued: 1, inFlight: 1, sentInWindow: 1 });
    assert.deepEqual(await pacing.read('d', 1_000, 3_101), { queued: 1, inFlight: 0, sentInWindow: 1 });
    assert.deepEqual(await pacing.read('d', 1_000, 4_106), { queued: 1, inFlight: 0, sentInWindow: 0 });
    assert.deepEqual(await pacing.read('d', 1_000, 10_001), { queued: 0, inFlight: 0, sentInWindow: 0 });
  });
});
