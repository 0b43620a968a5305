/**
 * Work in flight: what a claim hands out, what a completion records, and what a destination
 * has left (its work and its counts).
 */

import type { DeliveryStatus } from '@sluice/core';
import type { Attempt } from './delivery.ts';

/** A delivery handed to the delivery queue, with what its request needs. */
export interface ClaimedDelivery {
  id: string;
  eventId: string;
  destinationId: string;
  eventType: string;
  payload: string;
  /** Its place in the destination's order (`webhook-sequence`): every claimed delivery has one. */
  sequence: number;
  /** Attempts made before this one. */
  attempts: number;
  attemptBase: number;
  eventCreatedAt: number;
  /** The one request a suspended destination gets: does the endpoint answer again? */
  probe?: boolean;
  /**
   * Published ahead of its window's room (core tick.ts `publishAhead`): its request must not
   * start before this moment (ms); the runner waits for it.
   */
  notBefore?: number;
}

/** What a claim took, and what it left for later. */
export interface Claim {
  /** In claim order; at most the `max` asked for. */
  deliveries: ClaimedDelivery[];
  /** Earliest `nextAttemptAt` of a delivery still pending after the claim, or null. */
  nextPendingAt: number | null;
}

export interface CompletedAttempt {
  attempt: Attempt;
  /** `cancelled`: its transform cancelled it (no request was made). */
  status: Extract<DeliveryStatus, 'delivered' | 'pending' | 'dead' | 'cancelled'>;
  nextAttemptAt: number | null;
  disableDestination: boolean;
  /** The attempt was a suspended destination's probe. */
  probe?: boolean;
  /** When to try again if the attempt is held (its destination degraded or suspended). */
  holdAt?: number | null;
  /** The delivery's event: a dead one is told as `sluice.delivery.dead` (operational.ts). */
  event?: { id: string; type: string; tenantId: string };
}

/** A delivery claimed before a cutoff (`Store.staleClaims`). */
export interface StaleClaim {
  id: string;
  destinationId: string;
  /** Attempts made before the claimed one. */
  attempts: number;
}

export interface DestinationWork {
  /** Earliest `nextAttemptAt` of a pending delivery, or null when none is pending. */
  nextPendingAt: number | null;
  /** Deliveries `queued` or `delivering`. */
  inQueue: number;
}

export interface DestinationCounts {
  pending: number;
  inQueue: number;
  oldestPendingAt: number | null;
  delivered: number;
  dead: number;
}

/** The counts of a destination with nothing to count. */
export function emptyCounts(): DestinationCounts {
  return { pending: 0, inQueue: 0, oldestPendingAt: null, delivered: 0, dead: 0 };
}
