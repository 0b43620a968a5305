/**
 * An accept that publishes at once (docs/adr/0016): the API takes an idle destination's tick
 * before the accept's statement, the store inserts the deliveries claimed, and the held tick
 * counts and publishes them with no claim of its own. A real Redis, a SQLite store for the
 * destination, and the store's answer written by the test (the Postgres statement that
 * inserts them claimed has its own tests in store-postgres).
 */

import assert from 'node:assert/strict';
import { afterEach, describe, it } from 'node:test';
import { newId, newKeyring } from '@sluice/core';
import { EngineMetrics } from '@sluice/engine';
import { cleanup, REDIS_URL, redisAvailable, uniquePrefix } from '@sluice/redis/testing';
import type { AcceptResult, ClaimedDelivery, Store } from '@sluice/store';
import { newDestination } from '@sluice/store/conformance';
import { SqliteStore } from '@sluice/store-sqlite';
import { pino } from 'pino';
import { Registry } from 'prom-client';
import { RedisDispatcher } from './dispatcher.ts';
import { openSharedState } from './shared-state.ts';
import { createTickLoop } from './tick-loop.ts';

const skip = !(await redisAvailable());
const closing: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closing.splice(0)) await close();
});

async function rig() {
  const prefix = uniquePrefix();
  const sqlite = new SqliteStore(':memory:', { keyring: newKeyring() });
  const tenantId = newId('ten');
  await sqlite.createTenant({ id: tenantId, name: 'Acme', createdAt: Date.now() }, 'hash');
  const { id } = await sqlite.createDestination(
    newDestination(tenantId, { rateLimit: { limit: 10, period: 'second' } }),
    Date.now(),
  );
  const claims: string[] = [];
  // The store the ticks claim from: a claim is counted, and finds nothing.
  const store = new Proxy(sqlite, {
    get: (target, key) =>
      key === 'claimDue'
        ? async (destinationId: string) => {
            claims.push(destinationId);
            return { deliveries: [], nextPendingAt: null };
          }
        : Reflect.get(target, key),
  }) as Store;
  const shared = await openSharedState({
    store,
    redisUrl: REDIS_URL,
    prefix,
    windowMarginMs: 5,
    arrivalBoundMs: 250,
    destinationCacheSize: 100,
  });
  await shared.redis.set(shared.keys.epoch(), 'ready');
  const published: ClaimedDelivery[] = [];
  const logger = pino({ level: 'silent' });
  const ticks = createTickLoop({
    shared,
    store,
    publisher: { publish: async (_id, deliveries) => void published.push(...deliveries) },
    metrics: new EngineMetrics(
      new Registry(),
      () => ({ queued: 0, inFlight: 0, scheduled: 0 }),
      async () => null,
    ),
    logger,
    clock: Date.now,
    leadMs: 100,
  });
  const { redis, keys, schedule, pacing, destinations } = shared;
  const dispatcher = new RedisDispatcher({
    redis,
    keys,
    schedule,
    pacing,
    destinations,
    logger,
    clock: Date.now,
    ticks,
    holdAccepts: { leadMs: 100, maxInFlight: 16 },
  });
  closing.push(async () => {
    await ticks.stop();
    await cleanup(shared.redis, prefix);
    await shared.close();
    await sqlite.close();
  });
  /** The store's answer to an accept of one event whose delivery went in claimed, or pending. */
  const result = (claimed: boolean): AcceptResult => {
    const delivery = { id: newId('dlv'), destinationId: id };
    const eventId = newId('evt');
    return {
      event: { id: eventId, deliveries: [delivery] },
      replayed: false,
      ...(claimed
        ? {
            claimed: [
              {
                ...delivery,
                eventId,
                eventType: 'order.created',
                payload: '{}',
                sequence: 1,
                attempts: 0,
                attemptBase: 0,
                eventCreatedAt: Date.now(),
              },
            ],
          }
        : {}),
    };
  };
  return { id, shared, ticks, dispatcher, claims, published, result };
}

describe('an accept that publishes at once', { skip }, () => {
  it('holds an idle destination’s tick, then publishes what was inserted claimed, with no claim', async () => {
    const r = await rig();
    const { keys, redis } = r.shared;
    const hold = await r.dispatcher.hold([r.id]);
    assert.deepEqual([...hold.room], [[r.id, 10]], 'a window of 10 with nothing in it: room for 10');
    assert.notEqual(
      await redis.zscore(keys.leases(0), r.id),
      null,
      'the tick is held while the statement runs',
    );
    hold.accepted([r.result(true)]);
    await r.ticks.stop();
    assert.equal(r.published.length, 1, 'published by the held tick');
    assert.deepEqual(r.claims, [], 'no claim statement');
    assert.equal(await redis.zcard(keys.queued(r.id)), 1, 'counted queued before the publish');
    assert.equal(await redis.zscore(keys.leases(0), r.id), null, 'settled');
    assert.notEqual(await redis.zscore(keys.schedule(0), r.id), null, 'its follow-up tick is scheduled');
  });

  it('a destination whose tick runs is not held: the accept wakes it after the commit', async () => {
    const r = await rig();
    const { keys, redis } = r.shared;
    const first = await r.dispatcher.hold([r.id]);
    const second = await r.dispatcher.hold([r.id]);
    assert.deepEqual([...second.room], [], 'its tick is held already');
    assert.equal(await redis.zscore(keys.woken(0), r.id), null, 'and nothing changed before the commit');
    second.accepted([r.result(false)]);
    await r.dispatcher.settled();
    assert.notEqual(
      await redis.zscore(keys.woken(0), r.id),
      null,
      'woken after it: the running tick looks again',
    );
    first.accepted([r.result(true)]);
    await r.ticks.stop();
    assert.equal(r.published.length, 1);
  });

  it('a failed accept, or one that inserted nothing claimed, runs the held tick as any tick', async () => {
    const r = await rig();
    const { keys, redis } = r.shared;
    (await r.dispatcher.hold([r.id])).failed();
    await r.ticks.stop();
    assert.deepEqual(r.claims, [r.id], 'a plain tick: it claims what is pending');
    assert.equal(await redis.zscore(keys.leases(0), r.id), null, 'and settles');
    const r2 = await rig();
    (await r2.dispatcher.hold([r2.id])).accepted([r2.result(false)]);
    await r2.ticks.stop();
    assert.deepEqual(r2.claims, [r2.id]);
    assert.equal(r2.published.length, 0);
  });

  it('holds nothing while the state is being rebuilt after a loss of Redis', async () => {
    const r = await rig();
    const { keys, redis } = r.shared;
    await redis.set(keys.epoch(), 'rebuilding');
    const hold = await r.dispatcher.hold([r.id]);
    assert.deepEqual([...hold.room], []);
    await r.ticks.stop();
    assert.equal(await redis.zscore(keys.leases(0), r.id), null, 'the claim went back');
    assert.deepEqual(r.claims, [], 'no tick ran');
  });
});
