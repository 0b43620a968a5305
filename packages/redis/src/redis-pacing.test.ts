import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type AdaptiveFeedback, mulberry32, ratePlan } from '@sluice/core';
import { type AttemptPace, LeaseLostError, MemoryPacing, type PaceCounts, Pacer } from '@sluice/engine';
import { cleanup, connect, requireRedis, uniquePrefix } from '@sluice/testing';
import type { Redis } from 'ioredis';
import { Keys } from './keys.ts';
import { RedisPacing } from './redis-pacing.ts';
import { Scripts } from './scripts.ts';
import { markStateBuilt, stateBuilt } from './state-built.ts';

await requireRedis();

const OPTIONS = { windowMarginMs: 5, arrivalBoundMs: 250 };
const NONE = {
  bucketTat: 0,
  adaptive: null,
  leaving: [],
  latencyMs: null,
  inFlightSince: null,
  answeredAt: null,
};

/** A start without a cap: never refused. */
async function started(pace: Promise<AttemptPace | null>): Promise<AttemptPace> {
  const p = await pace;
  assert.ok(p, 'a start without a cap is never refused');
  return p;
}

const atOnce = (fn: () => void) => {
  fn();
  return () => undefined;
};

describe('RedisPacing', () => {
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
    // 16 seeds: 10, 11 and 16 reach a response that comes after its send left the window
    // (the test after this one); 1 to 8 did not.
    for (let seed = 1; seed <= 16; seed++) {
      const random = mulberry32(seed);
      const roomRandom = mulberry32(seed + 100); // its own draws: the trajectory stays the same
      const capRandom = mulberry32(seed + 200); // likewise
      const keys = new Keys(`${prefix}-${seed}`);
      await markStateBuilt(redis, keys); // the state is built (no loss of Redis)
      // On this fake clock a write's lowering goes at once (in real time it waits for the bound).
      const remote = new RedisPacing({ redis, keys, ...OPTIONS, queuedExpiryMs: 600_000, later: atOnce });
      const local = new MemoryPacing(
        new Pacer({ marginMs: OPTIONS.windowMarginMs, arrivalBoundMs: OPTIONS.arrivalBoundMs }),
      );
      const d = 'dst_x';
      const periodMs = 1_000;
      const limit = 1 + Math.floor(random() * 20);
      // Even seeds: a burst allowance (the bucket); seeds 3, 4, 7, 8: adaptive pacing.
      const burst = seed % 2 === 0 ? limit + 1 + Math.floor(random() * 20) : null;
      const adaptive = seed % 4 >= 3 || seed % 4 === 0;
      const plan = { limit, periodMs, burst };
      const feedback = (at: number, latencyMs: number): AdaptiveFeedback | null => {
        if (!adaptive) return null;
        const roll = random();
        const status = roll < 0.2 ? 429 : roll < 0.25 ? 503 : roll < 0.3 ? null : 200;
        const retryAfterMs = status === 429 && random() < 0.5 ? Math.floor(random() * 3_000) : undefined;
        return { at, limit, periodMs, status, retryAfterMs, latencyMs };
      };
      let now = 1_000_000;
      await local.read(d, periodMs, now); // creates the destination's pace
      const queued: string[] = [];
      const running: { r: AttemptPace; l: AttemptPace; startedAt: number; writtenAt?: number }[] = [];
      let n = 0;
      let sawBucket = false;
      let sawBackoff = false;
      let sawLeaving = false;
      let sawRefused = false;
      for (let step = 0; step < 300; step++) {
        now += Math.floor(random() * 60);
        const roll = random();
        if (roll < 0.3) {
          const ids = Array.from({ length: 1 + Math.floor(random() * 3) }, () => `dlv_${n++}`);
          queued.push(...ids);
          const [rr, lr] = [
            await remote.published(d, ids, plan, now),
            await local.published(d, ids, plan, now),
          ];
          assert.equal(rr, lr, `roomAt after publishing, seed ${seed} step ${step}`);
        } else if (roll < 0.6 && queued.length > 0) {
          const id = queued.shift() as string;
          // First under a cap (a limit lowered since the publish): both refuse, changing
          // nothing, or both start, as a start without one would.
          const cap = 1 + Math.floor(capRandom() * (burst ?? limit));
          const [rc, lc] = [
            await remote.start(d, id, periodMs, 60_000, now, cap),
            await local.start(d, id, periodMs, 60_000, now, cap),
          ];
          assert.equal(rc === null, lc === null, `a start under cap ${cap}, seed ${seed} step ${step}`);
          sawRefused ||= rc === null;
          running.push({
            r: rc ?? (await started(remote.start(d, id, periodMs, 60_000, now))),
            l: lc ?? (await started(local.start(d, id, periodMs, 60_000, now))),
            startedAt: now,
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
            const f = feedback(now, now - (a?.startedAt ?? now));
            await a?.r.finished(now, f);
            await a?.l.finished(now, f);
          }
        }
        await redis.ping(); // let the fire-and-forget `written` land
        // With a horizon (a tick's lead): the sends that stop counting by then, the same on both.
        const horizon = now + Math.floor(roomRandom() * 300);
        const [r, l] = [
          await remote.read(d, periodMs, now, horizon),
          await local.read(d, periodMs, now, horizon),
        ];
        sawLeaving ||= r.leaving.length > 0;
        // An attempt in flight not yet written counts until it finishes locally, until its
        // timeout remotely: the same while no timeout passes, as here.
        const { adaptive: ra, ...rest } = r;
        const { adaptive: la, ...lest } = l;
        assert.deepEqual(rest, lest, `seed ${seed} step ${step}`);
        const view = (a: typeof ra) =>
          a && { limit: a.limit, periodMs: a.periodMs, effective: a.effective, holdUntil: a.holdUntil };
        assert.deepEqual(view(ra), view(la), `adaptive, seed ${seed} step ${step}`);
        sawBucket ||= r.bucketTat > now;
        sawBackoff ||= ra !== null && ra.effective < limit;
        const [rr, lr] = [await remote.published(d, [], plan, now), await local.published(d, [], plan, now)];
        assert.equal(rr, lr, `roomAt, seed ${seed} step ${step}`);
        // Room for a batch of free slots (a window-bound backlog's next tick): the same on both.
        const room = 1 + Math.floor(roomRandom() * limit);
        const [rk, lk] = [
          await remote.published(d, [], plan, now, { room }),
          await local.published(d, [], plan, now, { room }),
        ];
        assert.equal(rk, lk, `roomAt for ${room}, seed ${seed} step ${step}`);
        assert.ok(rk >= rr, 'room for more is never sooner than room for one');
        // Published ahead: the queued ones start no sooner than `startsAt`.
        const startsAt = now + Math.floor(roomRandom() * 300);
        const [ra2, la2] = [
          await remote.published(d, [], plan, now, { room, startsAt }),
          await local.published(d, [], plan, now, { room, startsAt }),
        ];
        assert.equal(ra2, la2, `roomAt for ${room} from ${startsAt}, seed ${seed} step ${step}`);
        assert.ok(ra2 >= startsAt);
      }
      assert.equal(sawBucket, burst !== null, `the bucket was exercised, seed ${seed}`);
      assert.ok(sawLeaving, `sends left within a horizon, seed ${seed}`);
      assert.ok(sawRefused, `a start was refused under a cap, seed ${seed}`);
      if (limit > 1) assert.equal(sawBackoff, adaptive, `adaptive pacing was exercised, seed ${seed}`);
    }
  });

  it('a response that comes after its send has left the window does not bring it back', async () => {
    // Found by the trajectories above with other draws (seed 1, step 264): written, then a
    // tick's read past written + bound + period + margin drops the send, then its response,
    // whose `ZADD LT` must not add it again to count until response + period + margin.
    const keys = new Keys(`${prefix}-late-finish`);
    await markStateBuilt(redis, keys); // the state is built (no loss of Redis)
    const remote = new RedisPacing({ redis, keys, ...OPTIONS, queuedExpiryMs: 600_000, later: atOnce });
    const local = new MemoryPacing(
      new Pacer({ marginMs: OPTIONS.windowMarginMs, arrivalBoundMs: OPTIONS.arrivalBoundMs }),
    );
    const plan = { limit: 2, periodMs: 1_000, burst: 4 };
    const t0 = 1_000_000;
    const late = t0 + OPTIONS.arrivalBoundMs + 1_000 + OPTIONS.windowMarginMs + 45;
    const seen: PaceCounts[][] = [];
    for (const p of [remote, local]) {
      await p.published('d', ['a', 'b'], plan, t0);
      const a = await started(p.start('d', 'a', 1_000, 60_000, t0));
      await started(p.start('d', 'b', 1_000, 60_000, t0 + 10)); // in flight throughout
      a.written(t0); // it arrived by t0 + bound
      await redis.ping(); // let the fire-and-forget `written` land
      const before = await p.read('d', 1_000, late, late); // a tick: `a` no longer counts
      await a.finished(late);
      seen.push([before, await p.read('d', 1_000, late, late)]);
    }
    assert.deepEqual(seen[0], seen[1], 'Redis as the single box');
    const [before, after] = seen[1] as PaceCounts[];
    assert.equal(before?.sentInWindow, 1);
    assert.equal(after?.sentInWindow, 1, 'only `b`');
    // The bucket counts `a` from t0 + bound, with `b`'s token after it (T = 500 ms).
    assert.equal(after?.bucketTat, t0 + OPTIONS.arrivalBoundMs + 2 * 500);
  });

  it('a request in flight across a loss of Redis counts again from when it can last have arrived', async () => {
    const keys = new Keys(`${prefix}-lost-in-flight`);
    await markStateBuilt(redis, keys); // the state is built (no loss of Redis)
    const pacing = new RedisPacing({ redis, keys, ...OPTIONS, queuedExpiryMs: 600_000, later: atOnce });
    const plan = { limit: 2, periodMs: 1_000, burst: null };
    await pacing.published('d', ['a', 'b'], plan, 0);
    const a = await started(pacing.start('d', 'a', 1_000, 60_000, 0));
    const b = await started(pacing.start('d', 'b', 1_000, 60_000, 0));
    b.written(100);
    await redis.ping();
    await redis.del(keys.sends('d'), keys.inflight('d')); // the loss
    await a.finished(400); // not written: the response bounds its arrival
    await b.finished(400); // written at 100: by 350 at the latest
    const at = (ms: number) => pacing.read('d', 1_000, ms).then((c) => c.sentInWindow);
    assert.equal(await at(1_354), 2);
    assert.equal(await at(1_355), 1, '`b` from 350');
    assert.equal(await at(1_405), 0, '`a` from 400');
  });

  it('a start of a delivery no longer counted queued knows a request of it started before', async () => {
    // Its job runs again after its worker died: the first start took it out of `queued`.
    const keys = new Keys(`${prefix}-started-before`);
    await markStateBuilt(redis, keys); // the state is built (no loss of Redis)
    const pacing = new RedisPacing({ redis, keys, ...OPTIONS, queuedExpiryMs: 600_000, later: atOnce });
    await pacing.published('d', ['a'], { limit: 10, periodMs: 1_000, burst: 5 }, 0);
    assert.equal((await started(pacing.start('d', 'a', 1_000, 60_000, 0))).startedBefore, false);
    assert.equal((await started(pacing.start('d', 'a', 1_000, 60_000, 10))).startedBefore, true);
  });

  it('no request starts while a shard of the state is lost, until the rebuild marks it built', async () => {
    // A worker holding jobs across a loss of Redis would start them against a window that
    // counts nothing sent before the loss.
    const keys = new Keys(`${prefix}-not-built`, 4);
    const pacing = new RedisPacing({ redis, keys, ...OPTIONS, queuedExpiryMs: 600_000, later: atOnce });
    await pacing.published('d', ['a', 'b'], { limit: 10, periodMs: 1_000, burst: null }, 0);
    assert.equal(await pacing.start('d', 'a', 1_000, 60_000, 10), null, 'nothing built yet');
    assert.equal((await pacing.read('d', 1_000, 10)).inFlight, 0, 'a refused start changes nothing');
    await markStateBuilt(redis, keys);
    assert.notEqual(await pacing.start('d', 'a', 1_000, 60_000, 20), null);
    // One shard's node came back empty: its marker went with its state.
    await redis.del(keys.built(keys.shardOf('d')));
    assert.equal(await stateBuilt(redis, keys), false);
    assert.equal(await pacing.start('d', 'b', 1_000, 60_000, 30), null);
    await markStateBuilt(redis, keys);
    assert.equal(await stateBuilt(redis, keys), true);
    assert.notEqual(await pacing.start('d', 'b', 1_000, 60_000, 40), null);
  });

  it('a start checks the cap the API stored with a change, whatever its caller still knows', async () => {
    const keys = new Keys(`${prefix}-stored-cap`);
    await markStateBuilt(redis, keys); // the state is built (no loss of Redis)
    const pacing = new RedisPacing({ redis, keys, ...OPTIONS, queuedExpiryMs: 600_000, later: atOnce });
    const ids = Array.from({ length: 8 }, (_, i) => `x${i}`);
    await pacing.published('d', ids, { limit: 20, periodMs: 1_000, burst: null }, 0);
    // The limit went from 20 to 5; the worker's copy has not heard yet and still passes 20.
    await pacing.storeCap('d', 5, 2_000);
    const started = [];
    for (const id of ids) started.push(await pacing.start('d', id, 1_000, 60_000, 10, 20));
    assert.equal(started.filter((p) => p !== null).length, 5, "the stored cap, not the caller's");
    // A caller that knows the lower limit is not raised by the stored one.
    await pacing.storeCap('d', 50, 3_000);
    assert.equal(await pacing.start('d', 'x5', 1_000, 60_000, 10, 5), null);
    // Without a cap of its own (a start that checks nothing) the stored cap is not applied.
    assert.notEqual(await pacing.start('d', 'x6', 1_000, 60_000, 10), null);
  });

  it('an older copy of a destination does not replace the cap a newer one stored', async () => {
    const keys = new Keys(`${prefix}-cap-versions`);
    await markStateBuilt(redis, keys); // the state is built (no loss of Redis)
    const pacing = new RedisPacing({ redis, keys, ...OPTIONS, queuedExpiryMs: 600_000, later: atOnce });
    const stored = async () => Number(await redis.hget(keys.cap('d'), 'c'));
    await pacing.storeCap('d', 5, 2_000);
    await pacing.storeCap('d', 20, 1_000); // a change committed before, its write late
    assert.equal(await stored(), 5);
    await pacing.storeCap('d', 20, 3_000);
    assert.equal(await stored(), 20);
    await pacing.storeCap('d', 30, 3_000); // one version twice: the lower cap
    assert.equal(await stored(), 20);
    assert.ok((await redis.pttl(keys.cap('d'))) > 0, 'kept only for a while');
    await pacing.storeCap('d', null, 4_000); // deleted
    assert.equal(await redis.exists(keys.cap('d')), 0);
  });

  it('a wake waits for the bucket of a burst allowance and an adaptive hold, as the single box', async () => {
    const keys = new Keys(`${prefix}-wake`);
    await markStateBuilt(redis, keys); // the state is built (no loss of Redis)
    const remote = new RedisPacing({ redis, keys, ...OPTIONS, queuedExpiryMs: 600_000 });
    const pacer = new Pacer({ marginMs: OPTIONS.windowMarginMs, arrivalBoundMs: OPTIONS.arrivalBoundMs });
    const local = new MemoryPacing(pacer);
    const scripts = new Scripts(redis, keys);
    const plan = ratePlan({ limit: 2, period: 'second', burst: 10 });
    const t0 = 1_000_000;
    const refused = { limit: 2, periodMs: 1_000, status: 429, retryAfterMs: 3_000, latencyMs: 2 };
    for (const p of [remote, local]) {
      // The burst at t0 (refused, Retry-After 3 s), then two more at t0 + 1.1 s.
      for (const [at, n] of [
        [t0, 10],
        [t0 + 1_100, 2],
      ] as const) {
        const ids = Array.from({ length: n }, (_, i) => `dlv_${at}_${i}`);
        await p.published('d', ids, plan, at);
        for (const id of ids) {
          const a = await started(p.start('d', id, 1_000, 10_000, at));
          await a.finished(at + 2, { ...refused, at: at + 2 });
        }
      }
    }
    const now = t0 + 1_200;
    const wake = (bucket: boolean, adaptive: boolean) =>
      scripts
        .wakeForWork('d', now, {
          limit: 10,
          periodMs: 1_000,
          windowMarginMs: OPTIONS.windowMarginMs,
          queuedExpiryMs: 600_000,
          bucket: bucket ? { burst: 10, emissionMs: 500 } : undefined,
          adaptiveLimit: adaptive ? 2 : undefined,
        })
        .then((w) => w.at);
    const pace = pacer.peek('d') as NonNullable<ReturnType<Pacer['peek']>>;
    assert.equal(await wake(false, false), now, 'the window alone has room now');
    // 12 tokens taken by t0 + 1.1 s: the bucket has one again at tat + margin − 9 × 500 ms.
    const bucketRoom = await wake(true, false);
    assert.equal(bucketRoom, pace.roomAt(now, plan));
    assert.ok(bucketRoom > now + 250 && bucketRoom < now + 600, `the bucket has room at ${bucketRoom - t0}`);
    const held = await wake(true, true);
    assert.equal(held, t0 + 1_102 + 3_000, 'the last Retry-After holds it');
    assert.equal(held, pace.roomAt(now, plan, pace.adaptive?.holdUntil ?? 0));
  });

  it('after a loss of Redis, what may have been sent holds the window and the bucket again', async () => {
    const keys = new Keys(`${prefix}-restore`);
    await markStateBuilt(redis, keys); // the state is built (no loss of Redis)
    const pacing = new RedisPacing({ redis, keys, ...OPTIONS, queuedExpiryMs: 600_000 });
    const plan = ratePlan({ limit: 2, period: 'second', burst: 10 });
    await pacing.restoreSends('d', [1_000, 1_000, 1_200], plan);
    const counts = await pacing.read('d', 1_000, 1_300);
    assert.equal(counts.sentInWindow, 3);
    assert.equal(counts.bucketTat, 2_500);
    await pacing.restoreSends('e', [1_000]);
    assert.equal((await pacing.read('e', 1_000, 1_300)).bucketTat, 0, 'no burst: no bucket');
  });

  it('lowers a send to its write time + the bound only when the response is not in by then', async () => {
    const keys = new Keys(`${prefix}-written`);
    await markStateBuilt(redis, keys); // the state is built (no loss of Redis)
    const pacing = new RedisPacing({ redis, keys, ...OPTIONS, arrivalBoundMs: 50, queuedExpiryMs: 10_000 });
    const score = (token: string) => redis.zscore(keys.sends('d'), token);
    const tokenOf = async (id: string) =>
      ((await redis.zrange(keys.sends('d'), '0', '-1')) as string[]).find((m) =>
        m.startsWith(`${id}:`),
      ) as string;
    await pacing.published('d', ['fast', 'slow'], { limit: 10, periodMs: 1_000, burst: null }, 0);
    const fast = await started(pacing.start('d', 'fast', 1_000, 3_000, 100));
    const slow = await started(pacing.start('d', 'slow', 1_000, 3_000, 100));
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
    await markStateBuilt(redis, keys); // the state is built (no loss of Redis)
    const pacing = new RedisPacing({ redis, keys, ...OPTIONS, queuedExpiryMs: 10_000 });
    await pacing.published('d', ['lost'], { limit: 10, periodMs: 1_000, burst: null }, 0);
    await pacing.published('d', ['started'], { limit: 10, periodMs: 1_000, burst: null }, 0);
    await pacing.start('d', 'started', 1_000, 3_000, 100); // its worker dies: never finishes
    assert.deepEqual(await pacing.read('d', 1_000, 200, 200), {
      ...NONE,
      queued: 1,
      inFlight: 1,
      inFlightSince: 100,
      sentInWindow: 1,
    });
    assert.deepEqual(await pacing.read('d', 1_000, 3_101), {
      ...NONE,
      queued: 1,
      inFlight: 0,
      sentInWindow: 1,
    });
    // Ahead of the window's room (a tick's lead): the send stops counting at 3_100 + 1_005,
    // and a read with a horizon past that drops it no sooner.
    assert.deepEqual(await pacing.read('d', 1_000, 4_000, 4_105), {
      ...NONE,
      queued: 1,
      inFlight: 0,
      sentInWindow: 1,
      leaving: [4_105],
    });
    assert.deepEqual((await pacing.read('d', 1_000, 4_000, 4_104)).leaving, []);
    assert.deepEqual(await pacing.read('d', 1_000, 4_106), {
      ...NONE,
      queued: 1,
      inFlight: 0,
      sentInWindow: 0,
    });
    assert.deepEqual(await pacing.read('d', 1_000, 10_001), {
      ...NONE,
      queued: 0,
      inFlight: 0,
      sentInWindow: 0,
    });
  });

  it('refuses to count for a tick whose lease another replica took over (fencing)', async () => {
    const keys = new Keys(`${prefix}-fence`);
    await markStateBuilt(redis, keys); // the state is built (no loss of Redis)
    const pacing = new RedisPacing({ redis, keys, ...OPTIONS, queuedExpiryMs: 600_000 });
    const scripts = new Scripts(redis, keys);
    const d = 'dst_fenced';
    const plan = { limit: 10, periodMs: 1_000, burst: null };
    const now = 5_000_000;
    await scripts.wake(d, now);
    const [first] = (await scripts.claimTicks(0, now, 1_000, 10)).ticks;
    assert.ok(first, 'the tick is claimed');
    // Its replica stalls for a whole lease; another claims the expired lease.
    const [second] = (await scripts.claimTicks(0, now + 1_001, 1_000, 10)).ticks;
    assert.ok(second && second.lease !== first.lease, 'the expired lease is claimed again');

    await assert.rejects(
      pacing.published(d, ['dlv_late'], plan, now + 1_002, { fence: first.lease }),
      LeaseLostError,
      'the stalled tick is refused',
    );
    assert.equal(await redis.zcard(keys.queued(d)), 0, 'and counted nothing');
    await pacing.published(d, ['dlv_1'], plan, now + 1_002, { fence: second.lease });
    assert.deepEqual(await redis.zrange(keys.queued(d), '0', '-1'), ['dlv_1'], 'the lease holder counts');
    // Not fenced (a caller without leases): counted as before.
    await pacing.published(d, ['dlv_2'], plan, now + 1_003);
    assert.equal(await redis.zcard(keys.queued(d)), 2);
    // A settled tick holds no lease: a late count with its token is refused too.
    await scripts.settle(d, second.lease, null);
    await assert.rejects(
      pacing.published(d, ['dlv_3'], plan, now + 1_004, { fence: second.lease }),
      LeaseLostError,
    );
  });

  it('the reads and counts of one turn are one script call per shard, each answered as if alone', async () => {
    // Four shards, twelve destinations: the ticks of one claim read and count side by side.
    const keys = new Keys(`${prefix}-batch`, 4);
    await markStateBuilt(redis, keys); // the state is built (no loss of Redis)
    const pacing = new RedisPacing({ redis, keys, ...OPTIONS, queuedExpiryMs: 600_000 });
    const scripts = new Scripts(redis, keys);
    const calls: Record<string, number> = { paceReadBatch: 0, paceRoomBatch: 0 };
    const conn = redis as unknown as Record<string, (...args: unknown[]) => Promise<unknown>>;
    const originals = Object.fromEntries(Object.keys(calls).map((name) => [name, conn[name]]));
    for (const name of Object.keys(calls)) {
      const original = originals[name] as (...args: unknown[]) => Promise<unknown>;
      conn[name] = function (this: unknown, ...args: unknown[]) {
        calls[name] = (calls[name] ?? 0) + 1;
        return original.apply(this, args);
      };
    }
    try {
      const plan = { limit: 3, periodMs: 1_000, burst: null };
      const ids = Array.from({ length: 12 }, (_, i) => `dst_b${i}`);
      const shards = new Set(ids.map((id) => keys.shardOf(id)));
      assert.ok(shards.size > 1, 'the destinations span shards');
      const now = 1_000_000;
      // Destination i has i % 4 sends in its window, one of them leaving within 100 ms.
      for (const [i, id] of ids.entries()) {
        for (let k = 0; k < i % 4; k++) {
          const pace = await started(pacing.start(id, `dlv_${i}_${k}`, 1_000, 10_000, now - 1_000 + 40 * k));
          await pace.finished(now - 1_000 + 40 * k + 10);
        }
      }
      const alone = [];
      for (const id of ids) alone.push(await pacing.read(id, 1_000, now, now + 100));
      calls.paceReadBatch = 0;
      const together = await Promise.all(ids.map((id) => pacing.read(id, 1_000, now, now + 100)));
      assert.deepEqual(together, alone);
      assert.equal(calls.paceReadBatch, shards.size, 'one read per shard');
      assert.ok(together.some((c) => c.leaving.length > 0));

      // Counts: each destination fenced by its own lease; one lease is stale.
      for (const id of ids) await scripts.wake(id, now);
      const leases = new Map<string, string>();
      for (const shard of shards)
        for (const t of (await scripts.claimTicks(shard, now, 60_000, 100)).ticks)
          leases.set(t.destinationId, t.lease);
      const stale = ids[5] as string;
      const counted = await Promise.allSettled(
        ids.map((id, i) =>
          pacing.published(id, [`dlv_new_${i}`, `dlv_new2_${i}`], plan, now, {
            fence: id === stale ? '1' : leases.get(id),
            startsAt: now + 50,
          }),
        ),
      );
      assert.equal(calls.paceRoomBatch, shards.size, 'one count per shard');
      for (const [i, id] of ids.entries()) {
        const r = counted[i];
        if (id === stale) {
          assert.ok(
            r?.status === 'rejected' && r.reason instanceof LeaseLostError,
            'only the stale tick is refused',
          );
          assert.equal(await redis.zcard(keys.queued(id)), 0);
        } else {
          assert.equal(r?.status, 'fulfilled');
          assert.deepEqual(await redis.zrange(keys.queued(id), '0', '-1'), [`dlv_new2_${i}`, `dlv_new_${i}`]);
          // What it answers is the room hint from startsAt, as the memory pace answers it.
          const local = new MemoryPacing(
            new Pacer({ marginMs: OPTIONS.windowMarginMs, arrivalBoundMs: OPTIONS.arrivalBoundMs }),
          );
          for (let k = 0; k < i % 4; k++) {
            await local.published(id, [`dlv_${i}_${k}`], plan, now - 1_000 + 40 * k);
            const pace = await started(local.start(id, `dlv_${i}_${k}`, 1_000, 10_000, now - 1_000 + 40 * k));
            await pace.finished(now - 1_000 + 40 * k + 10);
          }
          const expected = await local.published(id, ['a', 'b'], plan, now, { startsAt: now + 50 });
          assert.equal(r?.status === 'fulfilled' && r.value, expected, `room of ${id}`);
        }
      }
      // The settles of one turn: one call per shard, a lost lease refused alone.
      const settled = await Promise.all(
        ids.map((id) => scripts.settle(id, id === stale ? '1' : (leases.get(id) as string), now + 1_000)),
      );
      for (const [i, id] of ids.entries())
        assert.deepEqual(
          settled[i],
          id === stale ? { state: 'lost' } : { state: 'scheduled', at: now + 1_000 },
        );
    } finally {
      for (const name of Object.keys(calls))
        conn[name] = originals[name] as (...args: unknown[]) => Promise<unknown>;
      await cleanup(redis, `${prefix}-batch`);
    }
  });
});
