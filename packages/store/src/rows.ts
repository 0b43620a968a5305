/**
 * Row ↔ record mapping shared by the two stores: the SQLite and the Postgres schemas name
 * every column the same (snake_case, times as integer milliseconds). What differs is how a
 * JSON column arrives — text in SQLite, already parsed from JSONB in Postgres — so the
 * destination mapper is made for a decoder (`destinationDecoder`).
 *
 * Signing secrets and a credential's secret are sealed on the way into a row and opened on the way out
 * (`@sluice/core`'s secret box, with the store's keyring): the stores hold them encrypted,
 * their callers see them plain.
 */

import {
  type DeliveryStatus,
  type DestinationAuth,
  type DestinationHeaders,
  type DestinationTls,
  type EventFilter,
  type Keyring,
  mapAuthSecret,
  mapTlsSecret,
  type Ordering,
  openSecret,
  type Period,
  type RateLimit,
  sealSecret,
} from '@sluice/core';
import type { Attempt, Delivery, StoredEvent } from './delivery.ts';
import type {
  Destination,
  DestinationSecret,
  DestinationState,
  DestinationTransform,
  Tenant,
} from './destination.ts';
import { healthFromRow } from './health-rows.ts';
import type { ClaimedDelivery } from './work.ts';

export type Row = Record<string, unknown>;

const str = (v: unknown): string => v as string;
const num = (v: unknown): number => v as number;
const nullableNum = (v: unknown): number | null => (v === null ? null : (v as number));
const nullableStr = (v: unknown): string | null => (v === null ? null : (v as string));

export const DESTINATION_COLUMNS = [
  'id',
  'tenant_id',
  'name',
  'url',
  'rate_limit',
  'rate_period',
  'max_concurrency',
  'rate_burst',
  'adaptive',
  'ordering',
  'event_types',
  'retry_max_attempts',
  'retry_initial_delay_ms',
  'retry_max_delay_ms',
  'timeout_ms',
  'headers',
  'auth',
  'tls',
  'filter',
  'transform',
  'secrets',
  'state',
  'disabled_reason',
  'created_at',
  'updated_at',
] as const;

export type DestinationColumn = (typeof DESTINATION_COLUMNS)[number];

/** Every column but the id, the owner and the creation time, which never change. */
export const UPDATABLE_COLUMNS: readonly DestinationColumn[] = DESTINATION_COLUMNS.filter(
  (c) => c !== 'id' && c !== 'tenant_id' && c !== 'created_at',
);

/** The column values of a destination, JSON columns as JSON text, secrets sealed with `keyring`. */
export function destinationParams(
  d: Destination,
  keyring: Keyring,
): Record<DestinationColumn, string | number | null> {
  return {
    id: d.id,
    tenant_id: d.tenantId,
    name: d.name,
    url: d.url,
    rate_limit: d.rateLimit.limit,
    rate_period: d.rateLimit.period,
    max_concurrency: d.maxConcurrency,
    rate_burst: d.rateLimit.burst ?? null,
    adaptive: d.adaptive ? 1 : 0,
    ordering: d.ordering,
    event_types: JSON.stringify(d.eventTypes),
    retry_max_attempts: d.retry.maxAttempts,
    retry_initial_delay_ms: d.retry.initialDelayMs,
    retry_max_delay_ms: d.retry.maxDelayMs,
    timeout_ms: d.timeoutMs,
    headers: JSON.stringify(d.headers),
    auth: d.auth === null ? null : JSON.stringify(mapAuthSecret(d.auth, keyring, 'seal')),
    tls: d.tls === null ? null : JSON.stringify(mapTlsSecret(d.tls, keyring, 'seal')),
    filter: d.filter === null ? null : JSON.stringify(d.filter),
    transform: d.transform === null ? null : JSON.stringify(d.transform),
    secrets: JSON.stringify(
      d.secrets.map(
        (s): DestinationSecret => ({ secret: sealSecret(keyring, s.secret), expiresAt: s.expiresAt }),
      ),
    ),
    state: d.state,
    disabled_reason: d.disabledReason,
    created_at: d.createdAt,
    updated_at: d.updatedAt,
  };
}

/**
 * A destination mapper whose `json` turns a JSON column's value into the value; it opens the
 * secrets with `keyring`.
 */
export const destinationDecoder =
  (json: (value: unknown) => unknown) =>
  (r: Row, keyring: Keyring): Destination => ({
    id: str(r.id),
    tenantId: str(r.tenant_id),
    name: nullableStr(r.name),
    url: str(r.url),
    rateLimit: rateLimitOf(r),
    maxConcurrency: nullableNum(r.max_concurrency),
    adaptive: r.adaptive === true || r.adaptive === 1,
    ordering: str(r.ordering) as Ordering,
    eventTypes: json(r.event_types) as string[],
    retry: {
      maxAttempts: num(r.retry_max_attempts),
      initialDelayMs: num(r.retry_initial_delay_ms),
      maxDelayMs: num(r.retry_max_delay_ms),
    },
    timeoutMs: num(r.timeout_ms),
    headers: json(r.headers) as DestinationHeaders,
    auth:
      r.auth === null || r.auth === undefined
        ? null
        : mapAuthSecret(json(r.auth) as DestinationAuth, keyring, 'open'),
    tls:
      r.tls === null || r.tls === undefined
        ? null
        : mapTlsSecret(json(r.tls) as DestinationTls, keyring, 'open'),
    filter: r.filter === null || r.filter === undefined ? null : (json(r.filter) as EventFilter),
    transform:
      r.transform === null || r.transform === undefined ? null : (json(r.transform) as DestinationTransform),
    secrets: (json(r.secrets) as DestinationSecret[]).map((s) => ({
      secret: openSecret(keyring, s.secret),
      expiresAt: s.expiresAt,
    })),
    state: str(r.state) as DestinationState,
    disabledReason: nullableStr(r.disabled_reason),
    createdAt: num(r.created_at),
    updatedAt: num(r.updated_at),
    health: healthFromRow(r),
  });

/** `rate_burst` NULL: no burst (the key absent, not undefined). */
function rateLimitOf(r: Row): RateLimit {
  const rateLimit: RateLimit = { limit: num(r.rate_limit), period: str(r.rate_period) as Period };
  if (r.rate_burst !== null && r.rate_burst !== undefined) rateLimit.burst = num(r.rate_burst);
  return rateLimit;
}

/** A destination whose JSON columns the driver already parsed (Postgres JSONB). */
export const destinationFromRow = destinationDecoder((v) => v);

/**
 * Not numbered until first claimed (docs/adr/0006): NULL in Postgres, 0 in SQLite (whose column
 * stayed NOT NULL DEFAULT 0); numbers start at 1.
 */
const sequenceOf = (v: unknown): number | null => (v === null || v === 0 ? null : num(v));

export function deliveryFromRow(r: Row): Delivery {
  return {
    id: str(r.id),
    eventId: str(r.event_id),
    destinationId: str(r.destination_id),
    tenantId: str(r.tenant_id),
    sequence: sequenceOf(r.sequence),
    status: str(r.status) as DeliveryStatus,
    attempts: num(r.attempts),
    attemptBase: num(r.attempt_base),
    nextAttemptAt: nullableNum(r.next_attempt_at),
    lastError: nullableStr(r.last_error),
    createdAt: num(r.created_at),
    updatedAt: num(r.updated_at),
  };
}

export function attemptFromRow(r: Row): Attempt {
  return {
    id: str(r.id),
    deliveryId: str(r.delivery_id),
    destinationId: str(r.destination_id),
    attempt: num(r.attempt),
    startedAt: num(r.started_at),
    finishedAt: num(r.finished_at),
    statusCode: nullableNum(r.status_code),
    errorCode: nullableStr(r.error_code),
    errorMessage: nullableStr(r.error_message),
    responseExcerpt: nullableStr(r.response_excerpt),
  };
}

/** A claimed delivery from the claim's row (the delivery's columns and its event's). */
export function claimedFromRow(r: Row, destinationId: string): ClaimedDelivery {
  return {
    id: str(r.id),
    eventId: str(r.event_id),
    destinationId,
    eventType: str(r.type),
    payload: str(r.payload),
    sequence: num(r.sequence),
    attempts: num(r.attempts),
    attemptBase: num(r.attempt_base),
    eventCreatedAt: num(r.created_at),
  };
}

/** The columns a tenant is read from (never its key's hash). */
export const TENANT_COLUMNS = 'id, name, created_at, quota_events_per_second, quota_pending_events';

export function tenantFromRow(r: Row): Tenant {
  return {
    id: str(r.id),
    name: str(r.name),
    createdAt: num(r.created_at),
    quota: {
      eventsPerSecond: nullableNum(r.quota_events_per_second),
      pendingEvents: nullableNum(r.quota_pending_events),
    },
  };
}

export function eventFromRow(r: Row): StoredEvent {
  return {
    id: str(r.id),
    tenantId: str(r.tenant_id),
    type: str(r.type),
    payload: str(r.payload),
    idempotencyKey: nullableStr(r.idempotency_key),
    createdAt: num(r.created_at),
  };
}
