/**
 * Whether the Redis state was built from the store (docs/adr/0002): Postgres is the truth and
 * Redis a cache of it, which a FLUSHALL, a restart with nothing kept, or a cluster node that
 * came back empty loses in part or in whole. Two markers say it is there:
 *
 * - `epoch` ('ready'): no tick runs without it (redis-tick-loop.ts); the rebuild sets it
 *   to 'rebuilding' while it runs, so that none claims work the rebuild is returning.
 * - each shard's `built`, in the shard's slot beside its pace keys: no request starts
 *   without it (paceStart-6.lua). A worker may hold jobs across a loss, and their starts
 *   would meet a window that counts none of the requests sent before it; a node that loses
 *   its data loses its shards' markers with their state, which `epoch`, elsewhere, cannot tell.
 *
 * One key each, read and written one at a time: their slots differ on a cluster.
 */

import type { RedisClient } from './client.ts';
import type { Keys } from './keys.ts';

/** Whether the whole state is there: `epoch` says ready and no shard lost its marker. */
export async function stateBuilt(redis: RedisClient, keys: Keys): Promise<boolean> {
  const [epoch, ...shards] = await Promise.all([
    redis.get(keys.epoch()),
    ...keys.allShards().map((shard) => redis.exists(keys.built(shard))),
  ]);
  return epoch === 'ready' && shards.every((n) => n === 1);
}

/** The rebuild has begun: no tick claims work until `markStateBuilt`. */
export async function markStateRebuilding(redis: RedisClient, keys: Keys): Promise<void> {
  await redis.set(keys.epoch(), 'rebuilding');
}

/** The state was built from the store: every shard's marker, then `epoch`. */
export async function markStateBuilt(redis: RedisClient, keys: Keys): Promise<void> {
  await Promise.all(keys.allShards().map((shard) => redis.set(keys.built(shard), '1')));
  await redis.set(keys.epoch(), 'ready');
}
