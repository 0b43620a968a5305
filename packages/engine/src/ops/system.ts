/**
 * Sluice's own tenant and destination (ADR 0009): backlog alerts reach the operator as
 * webhooks delivered by Sluice itself, so they are signed, rate limited, retried and never
 * lost like any other. Fixed ids, so every process and every restart names the same rows.
 * No API key matches the tenant (its key hash is not a hash); the admin token sees it.
 */

import type { RateLimit } from '@sluice/core';
import type { Destination, Store, Tenant } from '@sluice/store';

export const SYSTEM_TENANT: Tenant = {
  id: 'ten_00000000000000000000000000',
  name: 'sluice (system)',
  createdAt: 0,
  quota: { eventsPerSecond: null, pendingEvents: null },
};
export const ALERTS_DESTINATION_ID = 'dst_00000000000000000000000000';

/** Where the operator receives alerts (`SLUICE_ALERT_URL`, `_SECRET`, `_RATE_LIMIT`). */
export interface AlertSink {
  url: string;
  /** `whsec_…`: the operator verifies the alerts with it. */
  secret: string;
  rateLimit: RateLimit;
}

/** True for Sluice's own destinations: trusted configuration, not a tenant's URL. */
export const isSystemDestination = (destination: Pick<Destination, 'tenantId'>): boolean =>
  destination.tenantId === SYSTEM_TENANT.id;

/** Creates or updates the alerts destination from the operator's settings (idempotent). */
export function ensureAlertsDestination(store: Store, sink: AlertSink, now: number): Promise<Destination> {
  return store.ensureSystemDestination(
    SYSTEM_TENANT,
    {
      id: ALERTS_DESTINATION_ID,
      tenantId: SYSTEM_TENANT.id,
      name: 'backlog alerts',
      url: sink.url,
      rateLimit: sink.rateLimit,
      maxConcurrency: null,
      adaptive: false,
      ordering: 'none',
      eventTypes: ['sluice.*'],
      retry: { maxAttempts: 20, initialDelayMs: 1_000, maxDelayMs: 600_000 },
      timeoutMs: 10_000,
      headers: {},
      auth: null,
      tls: null,
      filter: null,
      transform: null,
      secrets: [{ secret: sink.secret, expiresAt: null }],
    },
    now,
  );
}
