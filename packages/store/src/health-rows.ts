/**
 * Endpoint health ↔ the `health_*` columns of `destinations`, and the transitions table,
 * the same in both stores (SQLite migrations 0004 and 0015, Postgres 0003 and 0015; docs/adr/0007).
 */

import type { ErrorClass, Health, HealthState, SuspendReason } from '@sluice/core';

type Row = Record<string, unknown>;

import type { HealthTransition } from './health.ts';

const nullableNum = (v: unknown): number | null => (v === null || v === undefined ? null : Number(v));

export function healthFromRow(r: Row): Health {
  return {
    state: (r.health_state as HealthState | undefined) ?? 'healthy',
    since: nullableNum(r.health_since),
    consecutiveFailures: Number(r.health_consecutive_failures ?? 0),
    windowStart: Number(r.health_window_start ?? 0),
    windowAttempts: Number(r.health_window_attempts ?? 0),
    windowFailures: Number(r.health_window_failures ?? 0),
    probeFailures: Number(r.health_probe_failures ?? 0),
    nextProbeAt: nullableNum(r.health_next_probe_at),
    lastErrorClass: (r.health_last_error_class as ErrorClass | null | undefined) ?? null,
    suspendReason: (r.health_suspend_reason as SuspendReason | null | undefined) ?? null,
  };
}

/** Why a destination moved from `from` to `to`, as the transitions table records it. */
export function transitionReason(from: HealthState, to: HealthState): HealthTransition['reason'] {
  const rank = { healthy: 0, degraded: 1, suspended: 2 } as const;
  return rank[to] > rank[from] ? 'failures' : 'success';
}

export function transitionFromRow(r: Row): HealthTransition {
  return {
    destinationId: r.destination_id as string,
    at: Number(r.at),
    from: r.from_state as HealthState,
    to: r.to_state as HealthState,
    reason: r.reason as HealthTransition['reason'],
    consecutiveFailures: Number(r.consecutive_failures),
    errorClass: (r.error_class as ErrorClass | null) ?? null,
  };
}
