/**
 * Real Redis for tests: `REDIS_URL` or 127.0.0.1:6379, a unique key prefix per test, and
 * its keys deleted afterwards. Where no Redis answers, the tests skip, saying so loudly —
 * except in CI (`CI=true`), where a missing Redis fails them.
 */

import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import type { ClaimedDelivery } from '@sluice/store';
import { Redis } from 'ioredis';
import { deleteMatching, type RedisClient, type RedisTarget } from './connection.ts';

export const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379/0';

/** The test server as the services' settings name it. */
export const REDIS_TARGET: RedisTarget = { url: REDIS_URL, cluster: false };

let available: Promise<boolean> | undefined;

export function redisAvailable(): Promise<boolean> {
  available ??= (async () => {
    const probe = new Redis(REDIS_URL, {
      lazyConnect: true,
      maxRetriesPerRequest: 0,
      retryStrategy: () => null,
    });
    try {
      await probe.connect();
      await probe.ping();
      return true;
    } catch {
      if (process.env.CI === 'true')
        throw new Error(`CI: Redis is required at ${REDIS_URL} and did not answer`);
      process.stderr.write(`\n*** SKIPPING Redis tests: no Redis at ${REDIS_URL} ***\n\n`);
      return false;
    } finally {
      probe.disconnect();
    }
  })();
  return available;
}

export const uniquePrefix = (): string => `sluice-test-${randomBytes(6).toString('hex')}`;

export function connect(): Redis {
  return new Redis(REDIS_URL, { maxRetriesPerRequest: 3 });
}

/**
 * Deletes every key under `prefix` and under the prefixes made from it (`<prefix>-<name>`),
 * on every master of a cluster.
 */
export async function cleanup(redis: RedisClient, prefix: string): Promise<void> {
  await deleteMatching(redis, `${prefix}*`);
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
