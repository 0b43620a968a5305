/**
 * A tenant's ingest quotas (docs/operations.md "Tenant quotas"): the one policy both shapes
 * apply; each shape keeps the rate's state where its API replicas share it (in memory in
 * the single box, in Redis in the distributed shape).
 *
 * Glossary:
 * - eventsPerSecond: the rate quota, as a token bucket with room for one second's events:
 *   a tenant may post `eventsPerSecond` events at once after a quiet second, then
 *   `eventsPerSecond` a second;
 * - pendingEvents: the most events of the tenant not yet finished (an event is pending while
 *   one of its deliveries is pending, queued or delivering);
 * - tat: the bucket in GCRA form, one number: when it would be full again (ms). With the
 *   emission interval T = 1000 / eventsPerSecond and room for B = eventsPerSecond events,
 *   n more events fit at `now` when max(tat, now) + n·T − now ≤ B·T.
 *
 * An event counts once, whatever the number of destinations it fans out to: the quota is of
 * events, as the tenant posts them. A request that does not fit takes nothing (a batch is
 * all or nothing). Pure data: nothing here reads a clock.
 */

export interface TenantQuota {
  /** Events a second (a rate with room for one second's burst); null: none. */
  eventsPerSecond: number | null;
  /** Most events not yet finished; null: none. */
  pendingEvents: number | null;
}

export const NO_QUOTA: TenantQuota = { eventsPerSecond: null, pendingEvents: null };

export type QuotaName = keyof TenantQuota;

/** The tenant's own setting where it has one, else the operator-wide default. */
export function effectiveQuota(own: TenantQuota, defaults: TenantQuota): TenantQuota {
  return {
    eventsPerSecond: own.eventsPerSecond ?? defaults.eventsPerSecond,
    pendingEvents: own.pendingEvents ?? defaults.pendingEvents,
  };
}

/** What taking `n` events from a rate bucket gives. */
export type RateDecision =
  | { ok: true; tat: number }
  | {
      ok: false;
      /**
       * When the bucket has room for the request (ms from now); null when it never will:
       * the request is larger than the bucket (a batch of more events than the quota).
       */
      retryAfterMs: number | null;
    };

/**
 * Takes `n` events from the bucket whose state is `tat` (0 or any past time: full), at
 * `now`, with `eventsPerSecond` the quota: the new state when they fit.
 */
export function takeRate(tat: number, n: number, eventsPerSecond: number, now: number): RateDecision {
  const t = 1_000 / eventsPerSecond;
  const room = eventsPerSecond * t; // B·T: a second's worth of events, in ms
  const next = Math.max(tat, now) + n * t;
  if (next - now <= room + 1e-9) return { ok: true, tat: next };
  return { ok: false, retryAfterMs: n > eventsPerSecond ? null : next - now - room };
}

/** Events pending after the request, against the quota: does it fit? */
export function fitsPending(pending: number, n: number, pendingEvents: number): boolean {
  return pending + n <= pendingEvents;
}

/** How long a refusal of the pending quota asks to wait: deliveries finish at their pace. */
export const PENDING_RETRY_AFTER_S = 5;

/**
 * `Retry-After` in whole seconds, at least 1: for the rate, when the bucket has room for the
 * request (rounded up); for a request that never fits, 1 (its answer says why).
 */
export function retryAfterSeconds(retryAfterMs: number | null): number {
  return retryAfterMs === null ? 1 : Math.max(1, Math.ceil(retryAfterMs / 1_000));
}
