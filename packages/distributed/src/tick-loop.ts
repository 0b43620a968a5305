/**
 * A tick loop that runs the real tick (`createTick`) against this process's Redis state: a
 * rate limiter's, which loops over the schedule, and the API's, which runs only the ticks its
 * wakes claim (docs/adr/0013). Both log a tick the same way, so every process that runs
 * ticks tells the same story.
 */

import { createTick, type EngineMetrics, LeaseLostError, type Publisher } from '@sluice/engine';
import { type RedisClient, RedisTickLoop, type RedisTickLoopOptions, TenantHoldsReader } from '@sluice/redis';
import type { Store } from '@sluice/store';
import type { Logger } from 'pino';
import type { RedisState } from './redis-state.ts';

export interface TickLoopOptions {
  redisState: Pick<RedisState, 'redis' | 'keys' | 'destinations' | 'pacing'>;
  store: Store;
  publisher: Publisher;
  metrics: EngineMetrics;
  logger: Logger;
  clock: () => number;
  /** `SLUICE_TICK_LEAD_MS` (docs/adr/0012). */
  leadMs: number;
  /** `SLUICE_TICK_LEASE_MS`: how long a claimed tick is this process's without a renewal. */
  leaseMs?: number | undefined;
  /** `SLUICE_DESTINATION_MAX_IN_FLIGHT`: the fair bound's ceiling (docs/adr/0014). */
  maxInFlight?: number | undefined;
  /** Kicks end the loops' sleeps (a rate limiter); absent: polling only, or no loops at all. */
  subscriber?: RedisClient | undefined;
  onTakeover?: RedisTickLoopOptions['onTakeover'];
}

export function createTickLoop(options: TickLoopOptions): RedisTickLoop {
  const { redisState, logger, clock } = options;
  // The delivery workers' tenants held by slow requests (tenant-holds.ts), read as ticks ask.
  const holds = new TenantHoldsReader({ redis: redisState.redis, keys: redisState.keys });
  return new RedisTickLoop({
    redis: redisState.redis,
    subscriber: options.subscriber,
    keys: redisState.keys,
    clock,
    ...(options.leaseMs === undefined ? {} : { leaseMs: options.leaseMs }),
    tick: createTick({
      store: options.store,
      destinations: redisState.destinations,
      pacing: redisState.pacing,
      publisher: options.publisher,
      metrics: options.metrics,
      clock,
      leadMs: options.leadMs,
      maxInFlight: options.maxInFlight,
      tenantHeld: (tenantId) => holds.held(tenantId),
    }),
    onTickError: (destinationId, err) =>
      err instanceof LeaseLostError
        ? logger.warn(
            { destinationId },
            'a tick stalled past its lease and another process took over: it published nothing; ' +
              'what it claimed returns to pending after the lease',
          )
        : logger.error({ err, destinationId }, 'tick failed'),
    ...(logger.isLevelEnabled('debug') ? { onTick: (tick) => logger.debug(tick, 'tick') } : {}),
    ...(options.onTakeover ? { onTakeover: options.onTakeover } : {}),
  });
}
