import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { cleanup, connect, requireRedis, uniquePrefix } from '@sluice/testing';
import type { Redis } from 'ioredis';
import { Keys } from './keys.ts';
import { RedisPacing } from './redis-pacing.ts';
import { markStateBuilt } from './state-built.ts';

await requireRedis();

const LEASE_MS = 300;
const TIMEOUT_MS = 30_000;
const PLAN = { limit: 100, periodMs: 1_000, burst: null };

/**
 * A request's `inflight` entry lasts its lease unless the process that started it renews it:
 * a live process's long request keeps counting (against maxConcurrency and the fair bound)
 * until it finishes, a dead one's stops counting within the lease, as its job's lock does —
 * not at the request's timeout.
 */
describe('RedisPacing in-flight lease', () => {
  let redis: Redis;
  const prefix = uniquePrefix();
  before(() => {
    redis = connect();
  });
  after(async () => {
    await cleanup(redis, prefix);
    redis.disconnect();
  });

  it("a live process's request counts until it finishes; a dead one's within the lease", async () => {
    const keys = new Keys(`${prefix}-lease`);
    await markStateBuilt(redis, keys); // the state is built (no loss of Redis)
    const options = { redis, keys, windowMarginMs: 5, arrivalBoundMs: 250, inFlightLeaseMs: LEASE_MS };
    const live = new RedisPacing(options);
    const dead = new RedisPacing(options);
    await live.published('d', ['a', 'b'], PLAN, Date.now());
    const a = await live.start('d', 'a', 1_000, TIMEOUT_MS, Date.now());
    const b = await dead.start('d', 'b', 1_000, TIMEOUT_MS, Date.now());
    assert.ok(a && b);
    const busy = (await live.read('d', 1_000, Date.now())).inFlightSince;
    assert.equal((await live.read('d', 1_000, Date.now())).inFlight, 2);
    dead.close(); // its process is gone: nothing renews `b`
    await sleep(LEASE_MS * 3);
    const read = await live.read('d', 1_000, Date.now());
    assert.equal(read.inFlight, 1, "the live request only: the dead one's entry lapsed");
    assert.equal(read.inFlightSince, busy, 'busy without a break since the first start');
    assert.equal(read.sentInWindow, 2, 'both still count against the window until their deadline');
    await a.finished(Date.now());
    const done = await live.read('d', 1_000, Date.now());
    assert.equal(done.inFlight, 0);
    assert.equal(done.inFlightSince, null);
    live.close();
  });

  it('a live request whose entry lapsed (a stall, a late reply) counts again', async () => {
    const keys = new Keys(`${prefix}-restore`);
    await markStateBuilt(redis, keys); // the state is built (no loss of Redis)
    const pacing = new RedisPacing({
      redis,
      keys,
      windowMarginMs: 5,
      arrivalBoundMs: 250,
      inFlightLeaseMs: LEASE_MS,
    });
    await pacing.published('d', ['late', 'dropped'], PLAN, Date.now());
    // Its start's reply came a second late: the lease it was given had run out already.
    const late = await pacing.start('d', 'late', 1_000, TIMEOUT_MS, Date.now() - 1_000);
    const dropped = await pacing.start('d', 'dropped', 1_000, TIMEOUT_MS, Date.now());
    assert.ok(late && dropped);
    await redis.ping(); // the renewal sent at once
    assert.equal((await pacing.read('d', 1_000, Date.now())).inFlight, 2, 'the late one renewed at once');
    // A read drops every entry (as after a stall past the lease): the next renewal puts them back.
    await redis.del(keys.inflight('d'));
    assert.equal((await pacing.read('d', 1_000, Date.now())).inFlight, 0);
    await sleep(LEASE_MS / 2);
    assert.equal((await pacing.read('d', 1_000, Date.now())).inFlight, 2, 'both counted again');
    await late.finished(Date.now());
    await sleep(LEASE_MS / 2);
    assert.equal((await pacing.read('d', 1_000, Date.now())).inFlight, 1, 'a finished one is not put back');
    await dropped.finished(Date.now());
    pacing.close();
  });

  it('without a lease, an entry lasts until the request times out', async () => {
    const keys = new Keys(`${prefix}-nolease`);
    await markStateBuilt(redis, keys); // the state is built (no loss of Redis)
    const pacing = new RedisPacing({ redis, keys, windowMarginMs: 5, arrivalBoundMs: 250 });
    await pacing.published('d', ['a'], PLAN, 0);
    await pacing.start('d', 'a', 1_000, 3_000, 100);
    assert.equal((await pacing.read('d', 1_000, 3_099)).inFlight, 1);
    assert.equal((await pacing.read('d', 1_000, 3_101)).inFlight, 0);
  });
});
