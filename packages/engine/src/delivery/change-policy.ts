/**
 * What follows a committed change of a destination (its limit, state, …, or its deletion),
 * for both shapes (the single box's Engine and the distributed API's RedisDispatcher): this
 * process re-reads it, the shape tells everything else that holds a copy, and it ticks at once
 * so the change is in force within one tick. A lowered limit's answer also waits until no
 * request started under the old limit may still arrive (docs/adr/0012), so every window that
 * begins after the answer holds the new limit.
 */

import { lowersCap } from '@sluice/core';
import type { Destination } from '@sluice/store';
import type { Logger } from 'pino';
import type { DestinationCache } from '../destination-cache.ts';
import { untilOldLimitArrived } from '../pace/arrivals.ts';
import type { Schedule } from '../tick/schedule.ts';

export interface ChangePorts {
  destinations: Pick<DestinationCache, 'peek' | 'refresh'>;
  logger: Logger;
  clock: () => number;
  /** Where the destination's tick is woken. */
  schedule: Pick<Schedule, 'wake'>;
  /**
   * After this process re-read it, before its tick: what else holds a copy hears of it (the
   * distributed shape: the cap every request's start checks, the change feed). The single
   * box's cache is the only copy.
   */
  publish?(destinationId: string, destination: Destination | undefined): Promise<void>;
  /** Whether a request started under the old limit may still arrive, as this shape knows it. */
  mayStillArrive(destinationId: string): () => boolean | Promise<boolean>;
  /** `SLUICE_ARRIVAL_BOUND_MS`: the answer waits for them at most twice this. */
  arrivalBoundMs: number;
}

export async function followDestinationChange(destinationId: string, ports: ChangePorts): Promise<void> {
  const { destinations, clock } = ports;
  const before = destinations.peek(destinationId);
  const destination = await destinations.refresh(destinationId);
  await ports.publish?.(destinationId, destination);
  if (destination?.state === 'active') await ports.schedule.wake(destinationId, clock());
  if (destination === undefined || !lowersCap(before?.rateLimit, destination.rateLimit)) return;
  await untilOldLimitArrived({
    destinationId,
    mayStillArrive: ports.mayStillArrive(destinationId),
    // Twice the bound: a request that started just before the change is written some time
    // later, and then has the whole bound to arrive (docs/adr/0012).
    maxWaitMs: 2 * ports.arrivalBoundMs,
    logger: ports.logger,
  });
}
