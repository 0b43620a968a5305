/**
 * The limit a destination is planned with now: its own, or adaptive pacing's effective one
 * (docs/adr/0008), never above its own. The tick plans with it, the single box's wake finds
 * the window's room with it, and the stats endpoints show it.
 */

import { type EffectiveLimit, effectiveLimit, PERIOD_MS } from '@sluice/core';
import type { Destination } from '@sluice/store';
import type { PaceCounts } from './pacing.ts';

export function paceLimit(
  destination: Pick<Destination, 'rateLimit' | 'adaptive'>,
  adaptive: PaceCounts['adaptive'],
  now: number,
): EffectiveLimit {
  const { limit, period } = destination.rateLimit;
  if (!destination.adaptive) return { limit, holdUntil: 0, backingOff: false };
  return effectiveLimit(
    adaptive && { ...adaptive, cutAt: 0, calmSince: 0, ewmaMs: 0, baseMs: 0 },
    limit,
    PERIOD_MS[period],
    now,
  );
}
