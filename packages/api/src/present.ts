/** Records as the API shows them: ISO times, no internals. */

import {
  CERTIFICATE_WARNING_MS,
  clientCertificateEnd,
  type DestinationTls,
  failureRate,
  type Health,
  presentAuth,
  presentTls,
} from '@sluice/core';
import type {
  Attempt,
  Delivery,
  Destination,
  HealthTransition,
  LoggedEvent,
  StoredEvent,
  Tenant,
  TenantKey,
} from '@sluice/store';
import type { z } from 'zod';
import { parseExact } from './json-body.ts';

type Json = z.infer<ReturnType<typeof z.json>>;

const iso = (ms: number | null): string | null => (ms === null ? null : new Date(ms).toISOString());
const isoOf = (ms: number): string => new Date(ms).toISOString();

export function presentTenant(t: Tenant) {
  return { id: t.id, name: t.name, createdAt: isoOf(t.createdAt), quota: { ...t.quota } };
}

export function presentKey(k: TenantKey) {
  return {
    id: k.id,
    prefix: k.prefix,
    createdAt: isoOf(k.createdAt),
    lastUsedAt: iso(k.lastUsedAt),
  };
}

export function presentDestination(d: Destination) {
  return {
    id: d.id,
    tenantId: d.tenantId,
    name: d.name,
    url: d.url,
    rateLimit: d.rateLimit,
    maxConcurrency: d.maxConcurrency,
    adaptive: d.adaptive,
    ordering: d.ordering,
    eventTypes: d.eventTypes,
    retry: d.retry,
    timeoutMs: d.timeoutMs,
    headers: d.headers,
    auth: presentAuth(d.auth),
    tls: presentTls(d.tls),
    filter: d.filter,
    transform: d.transform,
    state: d.state,
    disabledReason: d.disabledReason,
    health: presentHealth(d.health, d.tls),
    createdAt: isoOf(d.createdAt),
    updatedAt: isoOf(d.updatedAt),
  };
}

/** The health of a destination with `tls`: its client certificate flagged within 14 days of its end. */
export function presentHealth(h: Health, tls: DestinationTls | null, now = Date.now()) {
  const end = clientCertificateEnd(tls);
  return {
    state: h.state,
    since: iso(h.since),
    consecutiveFailures: h.consecutiveFailures,
    nextProbeAt: h.state === 'suspended' ? iso(h.nextProbeAt) : null,
    lastErrorClass: h.lastErrorClass,
    suspendReason: h.state === 'suspended' ? h.suspendReason : null,
    failureRate: failureRate(h),
    certificateExpiresAt: end !== undefined && end - now < CERTIFICATE_WARNING_MS ? isoOf(end) : null,
  };
}

export function presentTransition(t: HealthTransition) {
  return {
    at: isoOf(t.at),
    from: t.from,
    to: t.to,
    reason: t.reason,
    consecutiveFailures: t.consecutiveFailures,
    errorClass: t.errorClass,
  };
}

/** At creation only: the destination with its current signing secret. */
export function presentDestinationWithSecret(d: Destination) {
  const current = d.secrets.find((s) => s.expiresAt === null);
  return { ...presentDestination(d), secret: current?.secret ?? '' };
}

function presentAttempt(a: Attempt) {
  return {
    id: a.id,
    attempt: a.attempt,
    statusCode: a.statusCode,
    errorCode: a.errorCode,
    error: a.errorMessage,
    latencyMs: a.finishedAt - a.startedAt,
    responseExcerpt: a.responseExcerpt,
    startedAt: isoOf(a.startedAt),
    finishedAt: isoOf(a.finishedAt),
  };
}

export function presentDelivery(d: Delivery) {
  return {
    id: d.id,
    eventId: d.eventId,
    destinationId: d.destinationId,
    sequence: d.sequence,
    status: d.status,
    attemptCount: d.attempts,
    nextAttemptAt: d.status === 'pending' ? iso(d.nextAttemptAt) : null,
    lastError: d.lastError,
    createdAt: isoOf(d.createdAt),
    updatedAt: isoOf(d.updatedAt),
  };
}

export function presentDeliveryWithAttempts(d: Delivery, attempts: Attempt[]) {
  return { ...presentDelivery(d), attempts: attempts.map(presentAttempt) };
}

export function presentEvent(e: StoredEvent, deliveries: Delivery[]) {
  return {
    id: e.id,
    type: e.type,
    payload: parseExact(e.payload) as Json,
    idempotencyKey: e.idempotencyKey,
    createdAt: isoOf(e.createdAt),
    deliveries: deliveries.map((d) => presentDelivery(d)),
  };
}

/** An event of the event log: the size of its payload, not the payload; no deliveries. */
export function presentLoggedEvent(e: LoggedEvent) {
  return {
    id: e.id,
    type: e.type,
    payloadBytes: e.payloadBytes,
    idempotencyKey: e.idempotencyKey,
    createdAt: isoOf(e.createdAt),
  };
}
