/**
 * A destination's live pace for the stats endpoints, as either shape reads it: the counters
 * of its pace state and the limit the tick plans with now. A destination the delivery side
 * cannot read (deleted, or gone from the store) has no limit and no backoff.
 */

import type { Destination } from '@sluice/store';
import { paceLimit } from './pace-limit.ts';
import type { PaceCounts } from './pacing.ts';

export interface RuntimeStats {
  queued: number;
  inFlight: number;
  /** The limit the tick plans with now (adaptive pacing may hold it below the configured one). */
  effectiveLimit: number;
  backingOff: boolean;
}

export function runtimeStats(
  destination: Pick<Destination, 'rateLimit' | 'adaptive'> | undefined,
  pace: Pick<PaceCounts, 'queued' | 'inFlight' | 'adaptive'> | undefined,
  now: number,
): RuntimeStats {
  const effective =
    destination === undefined
      ? { limit: 0, backingOff: false }
      : paceLimit(destination, pace?.adaptive ?? null, now);
  return {
    queued: pace?.queued ?? 0,
    inFlight: pace?.inFlight ?? 0,
    effectiveLimit: effective.limit,
    backingOff: effective.backingOff,
  };
}
