/**
 * Destination changes, to every process: the API publishes a destination's id on the
 * `changes` channel after each commit that changes it; every rate limiter and worker
 * refreshes its cached copy (docs/design.md, flow 4: a tick reads the live limit, never a stale copy).
 * A subscriber that reconnects refreshes everything it holds, since it may have missed some.
 * On a Redis Cluster the subscription moves to another node without a reconnection of the
 * client (ioredis' ClusterSubscriber, when its node fails over or leaves): a node that joins
 * or leaves the cluster's map forgets everything too, then once more a moment later, after
 * the subscription has moved.
 */

import type { DestinationCache } from '@sluice/engine';
import type { RedisClient } from './client.ts';
import type { Keys } from './keys.ts';

/** How long after a cluster's nodes change its subscription has surely moved. */
const RESUBSCRIBED_MS = 2_000;

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
  let again: NodeJS.Timeout | undefined;
  const onNodes = (): void => {
    cache.clear();
    clearTimeout(again);
    again = setTimeout(() => cache.clear(), RESUBSCRIBED_MS);
    again.unref();
  };
  subscriber.on('message', onMessage);
  subscriber.on('ready', onReady);
  subscriber.on('+node', onNodes);
  subscriber.on('-node', onNodes);
  await subscriber.subscribe(channel);
  return {
    async stop() {
      subscriber.off('message', onMessage);
      subscriber.off('ready', onReady);
      subscriber.off('+node', onNodes);
      subscriber.off('-node', onNodes);
      clearTimeout(again);
      await subscriber.unsubscribe(channel).catch(() => undefined);
    },
  };
}
