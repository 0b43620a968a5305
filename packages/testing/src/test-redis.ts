/**
 * The shared Redis the packages' unit tests run on: `REDIS_URL` or 127.0.0.1:6379, a unique
 * key prefix per test, and its keys deleted afterwards. A test file that needs it awaits
 * `requireRedis()` first: where no Redis answers, the file fails, saying how to start one.
 */

import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import type { ClaimedDelivery } from '@sluice/store';
import { Cluster, Redis } from 'ioredis';
import { ServerMissingError, START_REDIS, shownUrl } from './required.ts';

export const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379/0';

/** The test server as the services' settings name it (`RedisTarget` of `@sluice/redis`). */
export const REDIS_TARGET = { url: REDIS_URL, cluster: false } as const;

const probed = new Map<string, Promise<void>>();

/**
 * Resolves once the Redis at `url` answers PING; rejects with a ServerMissingError naming the
 * URL, the setting that overrides it and how to start a server. Each URL is probed once.
 */
export function requireRedis(url = REDIS_URL, setting = 'REDIS_URL'): Promise<void> {
  let answered = probed.get(url);
  if (answered === undefined) {
    answered = (async () => {
      const probe = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
      // The socket's error (ECONNREFUSED…) comes as an event; the connect rejects with "closed".
      let cause: Error | undefined;
      probe.on('error', (err: Error) => {
        cause ??= err;
      });
      try {
        await probe.connect();
        await probe.ping();
      } catch (err) {
        const why = (cause ?? (err instanceof Error ? err : new Error(String(err)))).message;
        throw new ServerMissingError(
          `Redis is required at ${shownUrl(url)} (${setting}) and did not answer (${why}). Start one: ${START_REDIS}`,
        );
      } finally {
        probe.disconnect();
      }
    })();
    probed.set(url, answered);
  }
  return answered;
}

export const uniquePrefix = (): string => `sluice-test-${randomBytes(6).toString('hex')}`;

export function connect(): Redis {
  return new Redis(REDIS_URL, { maxRetriesPerRequest: 3 });
}

/**
 * Deletes every key under `prefix` and under the prefixes made from it (`<prefix>-<name>`),
 * on every master of a cluster (SCAN, then one UNLINK per key: keys of different slots may
 * not share a command).
 */
export async function cleanup(redis: Redis | Cluster, prefix: string): Promise<void> {
  if (redis instanceof Cluster) await redis.ping(); // its slots read: it knows its masters
  for (const node of redis instanceof Cluster ? redis.nodes('master') : [redis]) {
    let cursor = '0';
    do {
      const [next, keys] = await node.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1_000);
      cursor = next;
      if (keys.length === 0) continue;
      const pipeline = node.pipeline();
      for (const key of keys) pipeline.unlink(key);
      await pipeline.exec();
    } while (cursor !== '0');
  }
}

/** A claimed delivery numbered `n` of `destinationId`, as a tick publishes it (`dlv_<n>`, or `dlv_<destination>_<n>`). */
export function claimedDelivery(n: number, destinationId = 'dst_a'): ClaimedDelivery {
  return {
    id: destinationId === 'dst_a' ? `dlv_${n}` : `dlv_${destinationId}_${n}`,
    eventId: `evt_${n}`,
    destinationId,
    sequence: n,
    eventType: 'test',
    payload: JSON.stringify({ n }),
    attempts: 0,
    attemptBase: 0,
    eventCreatedAt: 0,
  };
}

/** Waits up to 10 s for `done`; fails naming `what`. */
export async function until(done: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!done() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
  assert.ok(done(), `timed out waiting for ${what}`);
}
