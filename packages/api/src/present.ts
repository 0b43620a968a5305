/** Records as the API shows them: ISO times, no internals. */

import type { Attempt, Delivery, Destination, Tenant } from '@sluice/engine';

const iso = (ms: number | null): string | null => (ms === null ? null : new Date(ms).toISOString());

export function presentTenant(t: Tenant) {
  return { id: t.id, name: t.name, createdAt: iso(t.createdAt) };
}

export function presentDestination(d: Destination, options: { withSecret?: boolean } = {}) {
  const current = d.secrets.find((s) => s.expiresAt === null);
  return {
    id: d.id,
    tenantId: d.tenantId,
    name: d.name,
    url: d.url,
    rateLimit: d.rateLimit,
    maxConcurrency: d.maxConcurrency,
    eventTypes: d.eventTypes,
    retry: d.retry,
    timeoutMs: d.timeoutMs,
    state: d.state,
    disabledReason: d.disabledReason,
    createdAt: iso(d.createdAt),
    updatedAt: iso(d.updatedAt),
    ...(options.withSecret && current ? { secret: current.secret } : {}),
  };
}

export function presentAttempt(a: Attempt) {
  return {
    id: a.id,
    attempt: a.attempt,
    statusCode: a.statusCode,
    errorCode: a.errorCode,
    error: a.errorMessage,
    latencyMs: a.finishedAt - a.startedAt,
    responseExcerpt: a.responseExcerpt,
    startedAt: iso(a.startedAt),
    finishedAt: iso(a.finishedAt),
  };
}

export function presentDelivery(d: Delivery, attempts?: Attempt[]) {
  return {
    id: d.id,
    eventId: d.eventId,
    destinationId: d.destinationId,
    status: d.status,
    attemptCount: d.attempts,
    nextAttemptAt: d.status === 'pending' ? iso(d.nextAttemptAt) : null,
    lastError: d.lastError,
    createdAt: iso(d.createdAt),
    updatedAt: iso(d.updatedAt),
    ...(attempts ? { attempts: attempts.map(presentAttempt) } : {}),
  };
}
