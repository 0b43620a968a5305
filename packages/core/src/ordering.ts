/**
 * Delivery order per destination (docs/adr/0006-fifo-ordering.md).
 *
 * - `none` (default): deliveries go out oldest due first, as many at once as the rate and
 *   `maxConcurrency` allow; a receiver that needs order reorders by `webhook-sequence`.
 * - `fifo`: best-effort first-in-first-out. First attempts leave in the order the events
 *   were accepted for the destination, one request at a time, so they also arrive in that
 *   order; a failing delivery does not block the ones behind it (its retry comes due later
 *   and goes out between them).
 *
 * Every request carries a `sequence`: 1, 2, 3… per destination, taken when the delivery is
 * first claimed (so in first-send order: for fifo, acceptance order), contiguous (so a
 * receiver can see a gap), kept across retries and replays.
 */

export const ORDERINGS = ['none', 'fifo'] as const;
export type Ordering = (typeof ORDERINGS)[number];
export const DEFAULT_ORDERING: Ordering = 'none';

/**
 * The most requests a destination may have open at once: a fifo destination one (order at
 * the receiver needs the previous request answered before the next starts), otherwise its
 * `maxConcurrency` (null: no cap).
 */
export function concurrencyCap(ordering: Ordering, maxConcurrency: number | null): number | null {
  if (ordering === 'fifo') return maxConcurrency === null ? 1 : Math.min(1, maxConcurrency);
  return maxConcurrency;
}

/** The order a tick claims a destination's due deliveries in. */
export type ClaimOrder = 'due' | 'sequence';

/**
 * `due`: by due time, then acceptance (oldest due first); `sequence`: the numbered deliveries
 * (retries, replays) by sequence, then the unnumbered ones (first attempts) in acceptance order.
 */
export function claimOrder(ordering: Ordering): ClaimOrder {
  return ordering === 'fifo' ? 'sequence' : 'due';
}
