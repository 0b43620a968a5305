import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { cleanup, connect, REDIS_TARGET, redisAvailable, uniquePrefix } from '@sluice/redis/testing';
import type { Destination, Store } from '@sluice/store';
import { pino } from 'pino';
import { RedisDispatcher } from './dispatcher.ts';
import { openSharedState, type SharedState } from './shared-state.ts';

/** The settings' defaults (SLUICE_WINDOW_MARGIN_MS, …_ARRIVAL_BOUND_MS, …_DESTINATION_CACHE_SIZE). */
const SETTINGS = { windowMarginMs: 5, arrivalBoundMs: 250, destinationCacheSize: 100_000 };

const skip = !(await redisAvailable());

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
        updatedAt,
      } as unknown as Destination;
    },
  } as unknown as Store;
}

/** The API's dispatcher over a process's shared state. */
function dispatcherOf(state: SharedState): RedisDispatcher {
  const { redis, keys, schedule, pacing, destinations } = state;
  return new RedisDispatcher({
    redis,
    keys,
    schedule,
    pacing,
    destinations,
    logger: pino({ level: 'silent' }),
    clock: Date.now,
  });
}

describe('RedisDispatcher', { skip }, () => {
  const prefix = uniquePrefix();
  const opened: SharedState[] = [];
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
        openSharedState({ store, redis: REDIS_TARGET, prefix, shards: 1, ...SETTINGS }),
      ),
    );
    opened.push(apiState as SharedState, workerState as SharedState);
    const { redis, keys, destinations } = apiState as SharedState;
    await dispatcherOf(apiState as SharedState).destinationCreated('dst_new');
    const cached = () => [destinations, workerState?.destinations].every((c) => c?.peek('dst_new'));
    const deadline = Date.now() + 5_000;
    while (!cached() && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
    assert.ok(cached(), 'the API and another process cache it, told by the change feed');
    assert.deepEqual([api.reads, worker.reads], [['dst_new'], ['dst_new']], 'one read each');
    assert.equal(await redis.zcard(keys.schedule(0)), 0, 'nothing to run: no tick is scheduled');
  });

  it('a process whose shard count differs from the one Redis holds refuses to start', async () => {
    const { store } = countingStore();
    opened.push(await openSharedState({ store, redis: REDIS_TARGET, prefix, shards: 1, ...SETTINGS }));
    await assert.rejects(
      openSharedState({ store, redis: REDIS_TARGET, prefix, shards: 4, ...SETTINGS }),
      /SLUICE_SCHEDULE_SHARDS is 4 but Redis holds the state of 1 shards/,
    );
  });

  it('a changed limit is where every start checks it before the change is announced', async () => {
    const state = await openSharedState({
      store: storeAt(5, 7_000),
      redis: REDIS_TARGET,
      shards: 1,
      prefix,
      ...SETTINGS,
    });
    opened.push(state);
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
    const state = await openSharedState({
      store: storeAt(5, 9_000),
      redis: REDIS_TARGET,
      shards: 1,
      prefix,
      ...SETTINGS,
    });
    opened.push(state);
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
