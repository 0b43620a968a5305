import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import { markStateBuilt, RedisTickLoop } from '@sluice/redis';
import type { Destination, Store } from '@sluice/store';
import { cleanup, connect, REDIS_TARGET, requireRedis, uniquePrefix } from '@sluice/testing';
import { pino } from 'pino';
import { RedisDispatcher } from './dispatcher.ts';
import { openRedisState, type RedisState } from './redis-state.ts';

/** The settings' defaults (SLUICE_WINDOW_MARGIN_MS, …_ARRIVAL_BOUND_MS, …_DESTINATION_CACHE_SIZE). */
const SETTINGS = { windowMarginMs: 5, arrivalBoundMs: 250, destinationCacheSize: 100_000 };

await requireRedis();

/** The one store read the destination cache makes, counted per process. */
function countingStore(): { store: Store; reads: string[] } {
  const reads: string[] = [];
  const store = {
    async getDestination(id: string) {
      reads.push(id);
      return { id, state: 'active' } as unknown as Destination;
    },
  } as unknown as Store;
  return { store, reads };
}

/** A store whose every destination is active at `limit` a second, last changed at `updatedAt`. */
function storeAt(limit: number, updatedAt: number): Store {
  return {
    async getDestination(id: string) {
      return {
        id,
        state: 'active',
        rateLimit: { limit, period: 'second' },
        health: { state: 'healthy' },
        updatedAt,
      } as unknown as Destination;
    },
  } as unknown as Store;
}

/** What the API's dispatcher reads of a process's shared state. */
function dependenciesOf(state: RedisState) {
  const { redis, keys, schedule, pacing, destinations } = state;
  return { redis, keys, schedule, pacing, destinations, logger: pino({ level: 'silent' }), clock: Date.now };
}

/** The API's dispatcher over a process's shared state. */
function dispatcherOf(state: RedisState): RedisDispatcher {
  return new RedisDispatcher(dependenciesOf(state));
}

describe('RedisDispatcher', () => {
  const prefix = uniquePrefix();
  const opened: RedisState[] = [];
  after(async () => {
    for (const s of opened) await s.close();
    const redis = connect();
    await cleanup(redis, prefix);
    redis.disconnect();
  });

  it('a created destination is cached by every process before its first event', async () => {
    const api = countingStore();
    const worker = countingStore();
    const [apiState, workerState] = await Promise.all(
      [api, worker].map(({ store }) =>
        openRedisState({ store, redis: REDIS_TARGET, prefix, shards: 1, ...SETTINGS }),
      ),
    );
    opened.push(apiState as RedisState, workerState as RedisState);
    const { redis, keys, destinations } = apiState as RedisState;
    await dispatcherOf(apiState as RedisState).destinationCreated('dst_new');
    const cached = () => [destinations, workerState?.destinations].every((c) => c?.peek('dst_new'));
    const deadline = Date.now() + 5_000;
    while (!cached() && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
    assert.ok(cached(), 'the API and another process cache it, told by the change feed');
    assert.deepEqual([api.reads, worker.reads], [['dst_new'], ['dst_new']], 'one read each');
    assert.equal(await redis.zcard(keys.schedule(0)), 0, 'nothing to run: no tick is scheduled');
  });

  it('a process whose shard count differs from the one Redis holds refuses to start', async () => {
    const { store } = countingStore();
    opened.push(await openRedisState({ store, redis: REDIS_TARGET, prefix, shards: 1, ...SETTINGS }));
    await assert.rejects(
      openRedisState({ store, redis: REDIS_TARGET, prefix, shards: 4, ...SETTINGS }),
      /SLUICE_SCHEDULE_SHARDS is 4 but Redis holds the state of 1 shards/,
    );
  });

  it('a changed limit is where every start checks it before the change is announced', async () => {
    const state = await openRedisState({
      store: storeAt(5, 7_000),
      redis: REDIS_TARGET,
      shards: 1,
      prefix,
      ...SETTINGS,
    });
    opened.push(state);
    await markStateBuilt(state.redis, state.keys);
    const { redis, keys, pacing } = state;
    await dispatcherOf(state).destinationChanged('dst_lowered');
    assert.deepEqual(await redis.hgetall(keys.cap('dst_lowered')), { c: '5', v: '7000' });
    const now = Date.now();
    const ids = Array.from({ length: 6 }, (_, i) => `dlv_${i}`);
    await pacing.published('dst_lowered', ids, { limit: 20, periodMs: 1_000, burst: null }, now);
    let started = 0;
    // A worker whose copy still says 20 a second.
    for (const id of ids)
      if ((await pacing.start('dst_lowered', id, 1_000, 10_000, now, 20)) !== null) started++;
    assert.equal(started, 5);
  });

  it('a lowered limit is answered once the requests started under the old one have arrived', async () => {
    const state = await openRedisState({
      store: storeAt(5, 9_000),
      redis: REDIS_TARGET,
      shards: 1,
      prefix,
      ...SETTINGS,
    });
    opened.push(state);
    await markStateBuilt(state.redis, state.keys);
    const { pacing } = state;
    const plan = { limit: 20, periodMs: 1_000, burst: null };
    const now = Date.now();
    await pacing.published('dst_slow', ['a', 'b'], plan, now);
    const a = await pacing.start('dst_slow', 'a', 1_000, 10_000, now);
    const b = await pacing.start('dst_slow', 'b', 1_000, 10_000, now);
    await a?.finished(Date.now());
    let answeredAt = 0;
    const changed = dispatcherOf(state)
      .destinationChanged('dst_slow')
      .then(() => {
        answeredAt = Date.now();
      });
    await new Promise((resolve) => setTimeout(resolve, 100));
    assert.equal(answeredAt, 0, 'not answered while `b` may still arrive');
    const arrivedAt = Date.now();
    await b?.finished(arrivedAt);
    await changed;
    assert.ok(answeredAt >= arrivedAt, 'answered after the request started under the old limit arrived');

    // A request whose worker died keeps its entry until its timeout: the wait is bounded
    // (twice the arrival bound, 500 ms here).
    await pacing.published('dst_dead', ['c'], plan, Date.now());
    assert.ok(await pacing.start('dst_dead', 'c', 1_000, 60_000, Date.now()));
    await dispatcherOf(state).destinationChanged('dst_dead');
  });
});

describe('RedisDispatcher.wakeAhead: an accept wakes while it commits', () => {
  const prefix = uniquePrefix();
  let state: RedisState;
  let dispatcher: RedisDispatcher;
  const loops: RedisTickLoop[] = [];
  /** The ticks the API ran: destination, due, and when it started. */
  const ran: { id: string; due: number; startedAt: number }[] = [];

  /** The API's dispatcher, running the ticks it claims under leases of `leaseMs`. */
  const apiOf = (leaseMs: number): RedisDispatcher => {
    const ticks = new RedisTickLoop({
      redis: state.redis,
      keys: state.keys,
      tick: async (id, due) => {
        ran.push({ id, due, startedAt: Date.now() });
        return null;
      },
      clock: Date.now,
      onTickError: (_id, err) => {
        throw err;
      },
      leaseMs,
    });
    loops.push(ticks);
    return new RedisDispatcher({ ...dependenciesOf(state), ticks });
  };

  before(async () => {
    state = await openRedisState({
      store: storeAt(10, 1_000),
      redis: REDIS_TARGET,
      prefix,
      shards: 1,
      ...SETTINGS,
    });
    await markStateBuilt(state.redis, state.keys);
    dispatcher = apiOf(10_000);
  });
  beforeEach(() => {
    ran.length = 0;
  });
  after(async () => {
    for (const ticks of loops) await ticks.stop();
    await state.close();
    const redis = connect();
    await cleanup(redis, prefix);
    redis.disconnect();
  });

  /** Where the destination is in the schedule: due at, leased until (null: not there). */
  const where = async (id: string) => ({
    due: await state.redis.zscore(state.keys.schedule(0), id),
    lease: await state.redis.zscore(state.keys.leases(0), id),
  });
  const until = async (ok: () => Promise<boolean> | boolean): Promise<void> => {
    const deadline = Date.now() + 5_000;
    while (!(await ok())) {
      assert.ok(Date.now() < deadline, 'in time');
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
  };

  it('claims the tick during the commit and runs it once the commit returns, due from then', async () => {
    const committed = dispatcher.wakeAhead(['dst_a']);
    await until(async () => (await where('dst_a')).lease !== null);
    await new Promise((resolve) => setTimeout(resolve, 30));
    assert.equal(ran.length, 0, 'nothing runs before the commit returns');
    const committedAt = Date.now();
    committed(new Set(['dst_a']));
    await dispatcher.settled();
    await until(() => ran.length === 1);
    assert.equal(ran[0]?.id, 'dst_a');
    assert.ok((ran[0]?.due ?? 0) >= committedAt, 'due from the commit, not from the claim');
    assert.ok((ran[0]?.startedAt ?? 0) - (ran[0]?.due ?? 0) < 1_000);
    await until(async () => (await where('dst_a')).lease === null);
    assert.deepEqual(await where('dst_a'), { due: null, lease: null }, 'its settle shut it down');
  });

  it('a failed commit hands its claims back untouched, due as they were', async () => {
    const claimedFrom = Date.now();
    const committed = dispatcher.wakeAhead(['dst_b', 'dst_c']);
    await until(async () => (await where('dst_b')).lease !== null && (await where('dst_c')).lease !== null);
    await new Promise((resolve) => setTimeout(resolve, 30));
    const failedAt = Date.now();
    committed(null);
    await dispatcher.settled();
    // The hand-back is a settle of the tick loop's (its `stop` awaits it).
    await until(async () => (await where('dst_b')).lease === null && (await where('dst_c')).lease === null);
    assert.equal(ran.length, 0, 'no tick ran');
    for (const id of ['dst_b', 'dst_c']) {
      const { due } = await where(id);
      assert.ok(
        Number(due) >= claimedFrom && Number(due) < failedAt,
        `${id} is due from its claim, for a rate limiter`,
      );
    }
    await state.redis.zrem(state.keys.schedule(0), 'dst_b', 'dst_c');
  });

  it('a destination whose tick ran elsewhere during the commit is woken after it', async () => {
    // A rate limiter runs dst_d's tick; the accept's claim finds it running.
    const { scripts } = state.schedule;
    const room = { limit: 10, periodMs: 1_000, windowMarginMs: 5, queuedExpiryMs: 60_000 };
    const elsewhere = await scripts.wakeForWork('dst_d', Date.now(), room, 10_000);
    assert.ok(elsewhere.lease !== null);
    const committed = dispatcher.wakeAhead(['dst_d']);
    await until(async () => (await state.redis.zscore(state.keys.woken(0), 'dst_d')) !== null);
    // It finishes before the commit; so does the tick the wake left it (a rate limiter's,
    // run at once): neither saw the accept's work, and the schedule no longer holds it.
    assert.equal((await scripts.settleKick('dst_d', elsewhere.lease, null)).state, 'scheduled');
    await state.redis.zrem(state.keys.schedule(0), 'dst_d');
    assert.deepEqual(await where('dst_d'), { due: null, lease: null });
    committed(new Set(['dst_d']));
    await dispatcher.settled();
    await until(() => ran.length === 1);
    assert.equal(ran[0]?.id, 'dst_d', 'the wake after the commit ran its tick');
  });

  it('a commit slower than a third of the lease sends its claims back meanwhile, and wakes after it', async () => {
    const slow = apiOf(600);
    const committed = slow.wakeAhead(['dst_e']);
    await until(async () => (await where('dst_e')).lease !== null);
    await until(async () => (await where('dst_e')).lease === null);
    assert.ok((await where('dst_e')).due !== null, 'given back to the schedule, for a rate limiter');
    assert.equal(ran.length, 0);
    // No rate limiter runs here: the wake after the commit claims the tick and runs it.
    committed(new Set(['dst_e']));
    await slow.settled();
    await until(() => ran.length === 1);
    assert.equal(ran[0]?.id, 'dst_e');
  });

  it('a shutdown waits for the claims of an accept still committing', async () => {
    const api = apiOf(10_000);
    const ticks = loops.at(-1) as RedisTickLoop;
    const committed = api.wakeAhead(['dst_f']);
    let down = false;
    // The API's close: its dispatcher settles, then its tick loop stops.
    const shutdown = api
      .settled()
      .then(() => ticks.stop())
      .then(() => {
        down = true;
      });
    await until(async () => (await where('dst_f')).lease !== null);
    await new Promise((resolve) => setTimeout(resolve, 30));
    assert.equal(down, false, 'not down while the commit runs');
    committed(new Set());
    await shutdown;
    assert.equal((await where('dst_f')).lease, null, 'its claim went back: no lease is left behind');
    await state.redis.zrem(state.keys.schedule(0), 'dst_f');
  });
});
