/**
 * Backlog alerts (ADR 0009): when a destination's backlog passes a threshold an alert is
 * raised; once the backlog is well back under it, the alert is resolved. Each destination
 * has one alert of each kind, each with its own state:
 *
 *   - `pending_count`: how many deliveries are pending;
 *   - `pending_age`: how long, in seconds, the longest-waiting due delivery has waited
 *     (the same measure as `sluice_oldest_pending_age_seconds`: since it came due, so a
 *     retry waiting out its backoff is not late).
 *
 *   quiet ──value > threshold──▶ firing ──value ≤ resolveBelow(threshold)──▶ quiet
 *
 * The gap between the two edges is the hysteresis: a backlog hovering at the threshold
 * raises once, not on every evaluation. A firing alert is never raised again. A kind whose
 * threshold is off (null) raises nothing and resolves what is firing.
 *
 * Pure: the evaluation is a function of the samples, the firing alerts and the time.
 */

export const ALERT_KINDS = ['pending_count', 'pending_age'] as const;
export type AlertKind = (typeof ALERT_KINDS)[number];

/** The operator's thresholds; null turns a kind off. */
export interface AlertThresholds {
  /** Raise when more deliveries than this are pending. */
  pendingCount: number | null;
  /** Raise when the oldest due delivery has waited longer than this. */
  pendingAgeSeconds: number | null;
}

/** What the store reports for one destination with pending deliveries. */
export interface BacklogSample {
  destinationId: string;
  tenantId: string;
  /** Pending deliveries, counted up to the store's cap (`countCap`): exact below it. */
  pending: number;
  /** The earliest `nextAttemptAt` of its pending deliveries, or null. */
  oldestDueAt: number | null;
}

/** An alert that is firing (its state as stored). */
export interface FiringAlert {
  destinationId: string;
  tenantId: string;
  kind: AlertKind;
  threshold: number;
  /** The observed value when it was raised. */
  value: number;
  raisedAt: number;
}

export interface AlertChange {
  action: 'raise' | 'resolve';
  destinationId: string;
  tenantId: string;
  kind: AlertKind;
  threshold: number;
  /** The observed value now (for a count: exact up to the cap). */
  value: number;
  /** Set on a resolve: the alert it resolves. */
  raised?: FiringAlert;
}

/** A firing alert resolves once its value is at or below half its threshold. */
const RESOLVE_RATIO = 0.5;

export function resolveBelow(threshold: number): number {
  return Math.floor(threshold * RESOLVE_RATIO);
}

/**
 * How far the store need count a destination's pending deliveries: one past the count
 * threshold tells "over it" and every value under it exactly, so no evaluation reads more
 * than that many index entries of one destination's backlog. At least 1 (whether any is
 * pending, for the age).
 */
export function countCap(thresholds: AlertThresholds): number {
  return Math.max(1, (thresholds.pendingCount ?? 0) + 1);
}

/** The observed value of `kind` in `sample` (none pending: 0). */
export function observed(sample: BacklogSample | undefined, kind: AlertKind, now: number): number {
  if (sample === undefined) return 0;
  if (kind === 'pending_count') return sample.pending;
  if (sample.oldestDueAt === null || sample.oldestDueAt >= now) return 0;
  return Math.floor((now - sample.oldestDueAt) / 1_000);
}

const thresholdOf = (thresholds: AlertThresholds, kind: AlertKind): number | null =>
  kind === 'pending_count' ? thresholds.pendingCount : thresholds.pendingAgeSeconds;

const keyOf = (destinationId: string, kind: AlertKind) => `${destinationId}\u0000${kind}`;

/**
 * What to raise and what to resolve now. `samples` name only destinations with pending
 * deliveries (those left out have none); a firing alert of a destination that is gone
 * resolves like one whose backlog drained.
 */
export function evaluateAlerts(
  samples: readonly BacklogSample[],
  firing: readonly FiringAlert[],
  thresholds: AlertThresholds,
  now: number,
): AlertChange[] {
  const changes: AlertChange[] = [];
  const bySample = new Map(samples.map((s) => [s.destinationId, s]));
  const fired = new Set<string>();
  for (const alert of firing) {
    fired.add(keyOf(alert.destinationId, alert.kind));
    const threshold = thresholdOf(thresholds, alert.kind);
    const value = observed(bySample.get(alert.destinationId), alert.kind, now);
    if (threshold === null || value <= resolveBelow(threshold)) {
      changes.push({
        action: 'resolve',
        destinationId: alert.destinationId,
        tenantId: alert.tenantId,
        kind: alert.kind,
        threshold: alert.threshold,
        value,
        raised: alert,
      });
    }
  }
  for (const sample of samples) {
    for (const kind of ALERT_KINDS) {
      const threshold = thresholdOf(thresholds, kind);
      if (threshold === null || fired.has(keyOf(sample.destinationId, kind))) continue;
      const value = observed(sample, kind, now);
      if (value > threshold) {
        changes.push({
          action: 'raise',
          destinationId: sample.destinationId,
          tenantId: sample.tenantId,
          kind,
          threshold,
          value,
        });
      }
    }
  }
  return changes;
}
