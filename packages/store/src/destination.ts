/**
 * Tenants and destinations as the stores keep them, and the two records both stores build
 * the same way: a new destination (`newDestinationRecord`) and a patched one
 * (`patchedDestination`).
 */

import {
  type DestinationAuth,
  type DestinationHeaders,
  type DestinationTls,
  type EventFilter,
  HEALTHY,
  type Health,
  type Ordering,
  type RateLimit,
  type RetryPolicy,
  type TenantQuota,
} from '@sluice/core';

export interface Tenant {
  id: string;
  name: string;
  createdAt: number;
  /** The operator's quotas for this tenant; a null falls back to the operator-wide default. */
  quota: TenantQuota;
}

/** A tenant to create: no quota of its own unless given. */
export type NewTenant = Omit<Tenant, 'quota'> & { quota?: TenantQuota };

/** What the operator may change of a tenant; an absent field is left as it is. */
export interface TenantPatch {
  name?: string;
  quota?: Partial<TenantQuota>;
}

export type DestinationState = 'active' | 'paused' | 'disabled';

export interface DestinationSecret {
  secret: string;
  /** When a rotated-out secret stops signing; null for the current one. */
  expiresAt: number | null;
}

/** A destination's transform: the code of its `handler(webhook)`. */
export interface DestinationTransform {
  code: string;
}

export interface Destination {
  id: string;
  tenantId: string;
  name: string | null;
  url: string;
  rateLimit: RateLimit;
  maxConcurrency: number | null;
  /** Adaptive pacing: back off on push-back, recover toward the limit (docs/adr/0008). */
  adaptive: boolean;
  /** `fifo`: first attempts one at a time, in sequence order (docs/adr/0006). */
  ordering: Ordering;
  eventTypes: string[];
  retry: RetryPolicy;
  timeoutMs: number;
  /** Sent on every attempt (docs/api.md "Custom headers and credentials"). */
  headers: DestinationHeaders;
  /** The credential the receiver checks; its secret is stored sealed. */
  auth: DestinationAuth | null;
  /** A client certificate and key (the key stored sealed), and a private CA (docs/api.md "Mutual TLS"). */
  tls: DestinationTls | null;
  /** Which events of its `eventTypes` it gets (docs/api.md "Filters"); null: all of them. */
  filter: EventFilter | null;
  /** JavaScript that reshapes what is sent, run at each attempt (docs/api.md "Transforms"); null: none. */
  transform: DestinationTransform | null;
  secrets: DestinationSecret[];
  state: DestinationState;
  disabledReason: string | null;
  createdAt: number;
  updatedAt: number;
  /** Endpoint health, the circuit breaker (docs/adr/0007); written by completeAttempts. */
  health: Health;
}

export type NewDestination = Omit<
  Destination,
  'state' | 'disabledReason' | 'createdAt' | 'updatedAt' | 'health'
>;

export type DestinationPatch = Partial<
  Pick<
    Destination,
    | 'name'
    | 'url'
    | 'rateLimit'
    | 'maxConcurrency'
    | 'adaptive'
    | 'ordering'
    | 'eventTypes'
    | 'retry'
    | 'timeoutMs'
    | 'headers'
    | 'auth'
    | 'tls'
    | 'filter'
    | 'transform'
    | 'secrets'
    | 'state'
    | 'disabledReason'
  >
>;

/** A destination as created: active, healthy, created and updated `now`. */
export function newDestinationRecord(input: NewDestination, now: number): Destination {
  return {
    ...input,
    state: 'active',
    disabledReason: null,
    createdAt: now,
    updatedAt: now,
    health: { ...HEALTHY },
  };
}

/** `current` with the fields the patch defines (an undefined one changes nothing), updated `now`. */
export function patchedDestination(current: Destination, patch: DestinationPatch, now: number): Destination {
  const defined = Object.fromEntries(Object.entries(patch).filter(([, v]) => v !== undefined));
  return { ...current, ...defined, updatedAt: now };
}
