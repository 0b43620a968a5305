/** Small display helpers, and the one rule for "backing up". */

import type { Backlog, RateLimit, Tenant } from './api.ts';

const PERIOD_SECONDS = { second: 1, minute: 60, hour: 3_600 } as const;

export const perSecond = (rate: RateLimit): number => rate.limit / PERIOD_SECONDS[rate.period];

export const formatRate = (rate: RateLimit): string => `${rate.limit.toLocaleString()} / ${rate.period}`;

export function formatAge(ms: number): string {
  if (ms <= 0) return '—';
  const s = Math.round(ms / 1_000);
  if (s < 60) return `${s}s`;
  if (s < 3_600) return `${Math.floor(s / 60)}m ${s % 60}s`;
  if (s < 86_400) return `${Math.floor(s / 3_600)}h ${Math.floor((s % 3_600) / 60)}m`;
  return `${Math.floor(s / 86_400)}d ${Math.floor((s % 86_400) / 3_600)}h`;
}

/** A size in bytes as people read it: 16 B, 4.2 KiB, 5.0 MiB. */
export function formatBytes(bytes: number): string {
  if (bytes < 1_024) return `${bytes} B`;
  if (bytes < 1_024 * 1_024) return `${(bytes / 1_024).toFixed(1)} KiB`;
  return `${(bytes / (1_024 * 1_024)).toFixed(1)} MiB`;
}

export const formatTime = (iso: string | null): string =>
  iso === null ? '—' : new Date(iso).toLocaleString(undefined, { hour12: false });

/** Seconds to drain what waits, at the configured limit. */
export const drainSeconds = (backlog: Backlog, rate: RateLimit): number =>
  (backlog.pending + backlog.queued) / perSecond(rate);

/**
 * Backing up: work has waited over a minute, or the backlog takes over a minute to drain at
 * the limit. Either way the destination receives less than is sent to it.
 */
const BACKING_UP_MS = 60_000;
export const isBackingUp = (backlog: Backlog, rate: RateLimit): boolean =>
  backlog.oldestPendingAgeMs > BACKING_UP_MS || drainSeconds(backlog, rate) * 1_000 > BACKING_UP_MS;

/** A tenant's own ingest quotas; where it has none, the operator-wide default applies (if set). */
export function formatQuota(quota: Tenant['quota']): string {
  const rate =
    quota.eventsPerSecond === null ? 'default' : `${quota.eventsPerSecond.toLocaleString()} events/s`;
  const pending =
    quota.pendingEvents === null ? 'default' : `${quota.pendingEvents.toLocaleString()} pending events`;
  return `${rate} · ${pending}`;
}

/**
 * An id abbreviated to its prefix and last six characters (`ten_…k3x9qp`): those are the ULID's
 * random part, where ids made in the same second still differ (their first characters are the
 * time). Where it is shown, the full id is a hover or a copy away.
 */
export function shortId(id: string): string {
  const cut = id.indexOf('_') + 1;
  return id.length - cut > 8 ? `${id.slice(0, cut)}…${id.slice(-6)}` : id;
}

/** A tenant as a picker lists it: names may repeat, so its short id tells it apart. */
export const tenantLabel = (tenant: Pick<Tenant, 'id' | 'name'>): string =>
  `${tenant.name} · ${shortId(tenant.id)}`;
