/**
 * Destination changes, to every process: the API publishes a destination's id on the
 * `changes` channel after each commit that changes it; every rate limiter and worker
 * refreshes its cached copy (docs/design.md, flow 4: a tick reads the live limit, never a stale copy).
 * A subscriber that reconnects refreshes everything it holds, since it may have missed some.
 */

import type { DestinationCache } from '@sluice/engine';
import type { RedisClient } from './connection.ts';
import type { Keys } from './keys.ts';

export async function publishChange(redis: RedisClient, keys: Keys, destinationId: string): Promise<void> {
  await redis.publish(keys.changesChannel(), destinationId);
}

export interface ChangeFeed {
  stop(): Promise<void>;
}

/** Subscribes `subscriber` (a dedicated connection) and keeps `cache` live. */
export async function followChanges(
  subscriber: RedisClient,
  keys: Keys,
  cache: DestinationCache,
  onChange?: (destinationId: string) => void,
): Promise<ChangeFeed> {
  const channel = keys.changesChannel();
  const onMessage = (from: string, destinationId: string): void => {
    if (from !== channel) return;
    void cache.refresh(destinationId).then(() => onChange?.(destinationId));
  };
  const onReady = (): void => cache.clear();
  subscriber.on('message', onMessage);
  subscriber.on('ready', onReady);
  await subscriber.subscribe(channel);
  return {
    async stop() {
      subscriber.off('message', onMessage);
      subscriber.off('ready', onReady);
      await subscriber.unsubscribe(channel).catch(() => undefined);
    },
  };
}
