/**
 * The tick of a suspended destination (docs/adr/0007): the circuit is open, so nothing is
 * published but one probe — a real delivery, the oldest pending one — when its time comes.
 *
 *   requests still out (sent before the suspension, or the last probe): wait for them;
 *   not yet time (`nextProbeAt`): sleep until then, no busy ticking;
 *   time: claim one delivery as the probe (the store moves `nextProbeAt` past its timeout,
 *     so no second probe overlaps it), publish it, sleep until the probe's outcome;
 *   nothing pending and nothing out: shut down (docs/design.md I4), as any idle destination.
 *
 * The probe's completion moves the health: a success closes the circuit (the destination is
 * woken and its backlog flows at the limit); a failure sets the next probe time, doubled.
 * Either way every process is told, and the tick is rescheduled.
 */

import { ratePlan, windowCap } from '@sluice/core';
import type { ClaimedDelivery, Destination, Store } from '@sluice/store';
import type { DestinationCache } from '../destination-cache.ts';
import type { EngineMetrics } from '../ops/metrics.ts';
import type { TickPacing } from '../pace/pacing.ts';

/** How soon a suspended destination whose requests are still out looks again. */
export const PROBE_RECHECK_MS = 250;
/** A probe holds the next one off for its timeout plus this, until its outcome lands. */
export const PROBE_HOLD_MARGIN_MS = 5_000;

export interface ProbeDeps {
  store: Store;
  destinations: DestinationCache;
  pacing: TickPacing;
  publisher: {
    publish(destinationId: string, deliveries: ClaimedDelivery[], tenantId?: string): Promise<void>;
  };
  metrics: EngineMetrics;
}

export async function probeTick(
  deps: ProbeDeps,
  destination: Destination,
  now: number,
  fence?: () => Promise<string>,
): Promise<number | null> {
  const { store, pacing, publisher, metrics } = deps;
  const id = destination.id;
  const plan = ratePlan(destination.rateLimit);
  const counts = await pacing.read(id, plan.periodMs, now);
  // A wake (a new event) must not re-tick it before the probe time.
  pacing.noteRoom(id, false);
  if (counts.queued + counts.inFlight > 0) {
    metrics.ticks.inc({ result: 'suspended' });
    return now + PROBE_RECHECK_MS;
  }
  // A probe is a request like any other: not while the failures that opened the circuit still
  // fill the window (its start would be refused, and the probe put back).
  if (counts.sentInWindow >= windowCap(plan)) {
    metrics.ticks.inc({ result: 'suspended' });
    return Math.max(now + 1, await pacing.published(id, [], plan, now));
  }
  const claim = await store.claimProbe(id, now, now + destination.timeoutMs + PROBE_HOLD_MARGIN_MS);
  if (claim.nextProbeAt === null) {
    // The store says the circuit is closed: this copy is stale. Tick again at once.
    await deps.destinations.refresh(id);
    metrics.ticks.inc({ result: 'suspended' });
    return now;
  }
  const probe = claim.deliveries;
  if (probe.length > 0) {
    // Counted before publishing, as every publish: the probe is in the send window too.
    // Fenced as every count (tick.ts): a probe of a tick that lost its lease is not sent.
    await pacing.published(
      id,
      probe.map((d) => d.id),
      plan,
      now,
      { fence: fence === undefined ? undefined : await fence() },
    );
    await publisher.publish(id, probe, destination.tenantId);
    metrics.probes.inc();
    metrics.ticks.inc({ result: 'probe' });
    return claim.nextProbeAt;
  }
  metrics.ticks.inc({ result: claim.nextPendingAt === null ? 'idle' : 'suspended' });
  return claim.nextPendingAt === null ? null : claim.nextProbeAt;
}
