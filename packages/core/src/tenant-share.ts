/**
 * A tenant's share of a pool of request slots (docs/operations.md "Tenants' shares of the
 * delivery slots"): the single box's `SLUICE_DELIVERY_CONCURRENCY` slots, or one delivery
 * worker's. A slot cannot be taken back while its request hangs, so the share holds at every
 * start, even while no other tenant has work: a tenant that arrives a moment later finds its
 * share free at once.
 *
 * With `tenants` holding or waiting for slots (the one asking included), each may hold
 *
 *   share = max(1, ⌊slots ÷ (tenants + 1)⌋)
 *
 * — the `+ 1` keeps a share free for the next tenant to arrive. Beyond its share a tenant may
 * take more while its requests answer quickly (none in flight for `quickMs` or longer), as
 * long as a tenth of the pool (`RESERVE`, at least one slot) stays free: a tenant alone,
 * whose receivers answer, uses nearly all of the pool (a reserve of a newcomer's whole share
 * cost a lone tenant a fifth of a delivery worker's throughput, docs/performance.md); one
 * whose receivers hang holds at most its share once they have hung `quickMs`, and never the
 * reserve, so a tenant arriving finds room at once.
 */

/** The share of a pool a tenant beyond its share leaves free. */
const RESERVE = 0.1;

export interface SlotAsk {
  /** The pool's size. */
  slots: number;
  /** Its slots free now. */
  free: number;
  /** Tenants holding or waiting for slots of the pool, the one asking included. */
  tenants: number;
  /** The asking tenant's requests in flight in the pool. */
  held: number;
  /** How long the oldest of them has been in flight (ms; 0: none). */
  oldestMs: number;
  /** A request in flight this long or longer is not quick. */
  quickMs: number;
}

/** What each of `tenants` tenants may hold of `slots`, a newcomer's share kept free. */
export function tenantShare(slots: number, tenants: number): number {
  return Math.max(1, Math.floor(slots / (Math.max(1, tenants) + 1)));
}

/** The slots a tenant beyond its share leaves free. */
export function reserve(slots: number): number {
  return Math.max(1, Math.ceil(slots * RESERVE));
}

/** Whether the tenant may start one more request now. */
export function mayTakeSlot(ask: SlotAsk): boolean {
  if (ask.free <= 0) return false;
  if (ask.held < tenantShare(ask.slots, ask.tenants)) return true;
  return ask.oldestMs < ask.quickMs && ask.free - 1 >= reserve(ask.slots);
}

/**
 * Whether the tenant holds its share with requests that are not quick: it will not get a slot
 * before one of them ends, whatever else frees (a distributed worker hands such a tenant's
 * job back to the queue instead of holding it).
 */
export function heldBySlowRequests(ask: Omit<SlotAsk, 'free'>): boolean {
  return ask.held >= tenantShare(ask.slots, ask.tenants) && ask.oldestMs >= ask.quickMs;
}
