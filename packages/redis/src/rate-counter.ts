/**
 * The tenants' events-a-second buckets in Redis: the distributed shape's `RateCounter` of
 * @sluice/api, so every API replica takes from one bucket per tenant. `takeRate-1.lua` runs
 * @sluice/core's `takeRate` arithmetic atomically in Redis (the single box runs it in memory).
 */

import type { RateDecision } from '@sluice/core';
import type { RedisClient } from './client.ts';
import type { Keys } from './keys.ts';
import { Scripts } from './scripts.ts';

export class RedisRateCounter {
  readonly #scripts: Scripts;

  constructor(redis: RedisClient, keys: Keys) {
    this.#scripts = new Scripts(redis, keys);
  }

  take(tenantId: string, n: number, eventsPerSecond: number, now: number): Promise<RateDecision> {
    return this.#scripts.takeRate(tenantId, n, eventsPerSecond, now);
  }
}
