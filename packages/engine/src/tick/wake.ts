/**
 * Waking a destination for new work (docs/design.md flow 1; "Words": Wake), for both shapes:
 * the API after a commit, a worker after a release, the alerter. A wake only ever moves a
 * tick sooner, and the tick re-reads everything it plans with (the window term keeps an
 * early tick within the limit), so the rule only decides how soon:
 *
 *   1. a destination whose circuit is open: its work waits for the probe time (docs/adr/0007);
 *   2. any other: no later than the earliest moment its window has room — and the bucket of
 *      a burst allowance, and past an adaptive hold (docs/adr/0008) — so an event under the
 *      limit goes out at once and a full window is not re-ticked on every event.
 *
 * Where the room is known is the shape's (`WakePorts.wakeAtRoom`): the single box reads its
 * pace in memory and wakes synchronously, so the tick is scheduled before the API answers;
 * the distributed shape asks Redis in one script, which may also claim a tick due now for
 * the caller to run (docs/adr/0013). The policy hands back what the port answers.
 */

import type { Health } from '@sluice/core';
import type { Destination } from '@sluice/store';

/**
 * The wake rule of an open circuit: a suspended destination's work waits for its probe
 * time (never earlier than now). Null: not suspended, the caller's own rule applies.
 */
export function probeWakeAt(health: Pick<Health, 'state' | 'nextProbeAt'>, now: number): number | null {
  if (health.state !== 'suspended') return null;
  return Math.max(now, health.nextProbeAt ?? now);
}

/** What a shape gives the wake to act with; `Woken` is what its wakes answer. */
export interface WakePorts<Woken> {
  /** Schedules the destination's tick no later than `at` (sooner only). */
  wake(destinationId: string, at: number): Woken;
  /**
   * Schedules it no later than the earliest moment its window has room (sooner only).
   * `destination` is undefined when this process holds no copy of it (the single box's
   * cache, which the wake reads without waiting): the port knows no room then.
   */
  wakeAtRoom(destinationId: string, destination: Destination | undefined, now: number): Woken;
}

/** Wakes `destinationId` for new work, as this process knows it now (`destination`). */
export function wakeForWork<Woken>(
  destinationId: string,
  destination: Destination | undefined,
  now: number,
  ports: WakePorts<Woken>,
): Woken {
  const probeAt = destination === undefined ? null : probeWakeAt(destination.health, now);
  if (probeAt !== null) return ports.wake(destinationId, probeAt);
  return ports.wakeAtRoom(destinationId, destination, now);
}
