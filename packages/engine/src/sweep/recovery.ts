/**
 * Rebuilding from the store what is not kept in it — the schedule and the pace — before any
 * tick runs (docs/design.md flow 5.4), for both shapes: the single box at every start (it
 * keeps both in memory), the distributed shape when Redis lost them in whole or in part (a
 * marker is gone; one replica rebuilds while the others wait, and no request starts until
 * it is done: `DistributedSweeper.recoverIfLost`).
 *
 *   1. claimed deliveries that nothing holds go back to pending (`RecoveryPorts.requeueClaims`);
 *   2. the attempts of the last hour refill each destination's send window, and the bucket of
 *      a burst allowance (docs/adr/0008): what was sent still counts against the limit. Each
 *      claim returned in step 1 counts as sent now: any of them may have reached the receiver
 *      (docs/design.md I2, I6);
 *   3. every destination with pending work is scheduled at its earliest due time (I1).
 */

import { PERIOD_MS } from '@sluice/core';
import type { Destination, Store } from '@sluice/store';
import type { DestinationCache } from '../destination-cache.ts';

/** How far back a send may still count against a window: the longest period, with a minute to spare. */
const RECENT_SENDS_MS = PERIOD_MS.hour + 60_000;

/** A request a destination was sent: its start, and the latest it can have arrived. */
export interface Send {
  startedAt: number;
  finishedAt: number;
}

/** What a shape gives the rebuild to act with. A port may answer at once or with a promise. */
export interface RecoveryPorts {
  store: Pick<Store, 'recentAttempts' | 'pendingDestinations'>;
  destinations: Pick<DestinationCache, 'get'>;
  /** Returns the claims that nothing holds to pending: how many, by destination. */
  requeueClaims(now: number): Promise<Map<string, number>>;
  /**
   * Refills a destination's pace with the requests it was sent, oldest first: its window and,
   * with a burst allowance, its bucket. `destination` is undefined when it is gone.
   */
  restorePace(destinationId: string, destination: Destination | undefined, sends: readonly Send[]): unknown;
  /** Schedules the destination's tick no later than `at` (sooner only). */
  wake(destinationId: string, at: number): unknown;
}

/** What a rebuild did: claims returned to pending, destinations scheduled. */
export interface Recovered {
  requeued: number;
  scheduled: number;
}

export async function recoverFromStore(ports: RecoveryPorts, now: number): Promise<Recovered> {
  const requeued = await ports.requeueClaims(now);
  const sends = new Map<string, Send[]>();
  const sent = (destinationId: string, send: Send) => {
    const list = sends.get(destinationId);
    if (list === undefined) sends.set(destinationId, [send]);
    else list.push(send);
  };
  for (const { destinationId, startedAt, finishedAt } of await ports.store.recentAttempts(
    now - RECENT_SENDS_MS,
  ))
    sent(destinationId, { startedAt, finishedAt });
  let count = 0;
  for (const [destinationId, n] of requeued) {
    for (let i = 0; i < n; i++) sent(destinationId, { startedAt: now, finishedAt: now });
    count += n;
  }
  for (const [destinationId, list] of sends)
    await ports.restorePace(destinationId, await ports.destinations.get(destinationId), list);
  const pending = await ports.store.pendingDestinations();
  for (const { destinationId, nextPendingAt } of pending) await ports.wake(destinationId, nextPendingAt);
  return { requeued: count, scheduled: pending.length };
}
