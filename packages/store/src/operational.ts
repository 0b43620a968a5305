/**
 * Operational events (docs/api.md "Operational events"): what Sluice tells a tenant about
 * its own destinations, as ordinary events of that tenant — stored, fanned out to the
 * tenant's destinations whose `eventTypes` name the type or `sluice.*`, signed, paced,
 * retried, replayable. Written once here; each store accepts them with its own `acceptOne`.
 *
 * Exactly once: a notice is accepted in the transaction that makes its transition (a
 * completion batch, an alert's change, a destination's update, a breaker's reset), so a
 * crash loses none; its idempotency key (`sluice:` + the transition's own name) makes a
 * repeat create no second event. One exception, rare: on Postgres, a batch of successes
 * runs without a transaction, and a success that closes a breaker without a probe has its
 * `recovered` written just after (complete.ts).
 *
 * No loops (docs/design.md "Operational events"):
 * - nothing is emitted about a delivery of a `sluice.…` event (its death included);
 * - an event about a destination never goes to that destination itself, and each is
 *   emitted once per transition of the destination (its breaker opening or closing, its
 *   disabling, an alert raised or resolved), never per attempt.
 */

import {
  classifyAttempt,
  failureRate,
  type Health,
  type HealthState,
  isHeld,
  isReservedType,
  matchesEventType,
} from '@sluice/core';
import type { NewEvent } from './delivery.ts';
import type { HealthChange } from './health.ts';
import type { CompletedAttempt } from './work.ts';

export type OperationalType =
  | 'sluice.destination.disabled'
  | 'sluice.destination.suspended'
  | 'sluice.destination.recovered'
  | 'sluice.destination.certificate_expiring'
  | 'sluice.delivery.dead'
  | 'sluice.backlog.raised'
  | 'sluice.backlog.resolved'
  | 'sluice.secret.rotated';

/** One operational event to emit: about `destinationId`, to its tenant. */
export interface OperationalNotice {
  tenantId: string;
  destinationId: string;
  type: OperationalType;
  occurredAt: number;
  data: Record<string, unknown>;
  /** Names the transition: the event's idempotency key is `sluice:` + it. */
  key: string;
}

/** A destination of the tenant that may hear of it. */
export interface Subscriber {
  id: string;
  eventTypes: readonly string[];
}

/** The tenant's destinations (not deleted) and their filters; `$1`/`?` the tenant. */
export const subscribersSql = (mark: (n: number) => string): string =>
  `SELECT id, event_types FROM destinations WHERE tenant_id = ${mark(1)} AND deleted_at IS NULL ORDER BY id`;

/** The notice as an event of its tenant, to the subscribers that name its type (never its own destination). */
export function operationalEvent(notice: OperationalNotice, subscribers: readonly Subscriber[]): NewEvent {
  const { type, tenantId, destinationId, occurredAt, data } = notice;
  return {
    type,
    payload: JSON.stringify({
      type,
      tenantId,
      destinationId,
      occurredAt: new Date(occurredAt).toISOString(),
      data,
    }),
    idempotencyKey: `sluice:${notice.key}`,
    destinationIds: subscribers
      .filter((s) => s.id !== destinationId && matchesEventType(s.eventTypes, type))
      .map((s) => s.id),
  };
}

/** A suspended destination's breaker closed by hand (`resetHealth`: a resume, a new URL). */
export function recoveredNotice(
  tenantId: string,
  destinationId: string,
  suspendedSince: number | null,
  now: number,
): OperationalNotice {
  return {
    tenantId,
    destinationId,
    type: 'sluice.destination.recovered',
    occurredAt: now,
    data: { suspendedForMs: Math.max(0, now - (suspendedSince ?? now)) },
    key: `recovered:${destinationId}:${now}`,
  };
}

/** A destination a completion batch moved, as the store saw it in the batch's transaction. */
export interface MovedDestination {
  destinationId: string;
  tenantId: string;
  from: HealthState;
  health: Health;
  /** Recovered ones: when the suspension began. */
  suspendedSince: number | null;
  /** This batch disabled it (a 410 while it was active). */
  disabled: boolean;
}

const iso = (ms: number | null): string => new Date(ms ?? 0).toISOString();

/** What an attempt's failure is called in a notice: its error code, else its status. */
function errorOf(c: CompletedAttempt): string | undefined {
  const { errorCode, errorMessage, statusCode } = c.attempt;
  if (errorCode !== null) return errorMessage === null ? errorCode : `${errorCode}: ${errorMessage}`;
  return statusCode === null ? undefined : `HTTP ${statusCode}`;
}

/**
 * The notices of one completion batch (pure; both stores call it inside the batch's
 * transaction): a destination whose breaker opened or closed or that a 410 disabled, and
 * each delivery that died — unless held by the breaker (pending again, not dead), or its
 * event is a `sluice.…` one.
 */
export function completionNotices(
  completed: readonly CompletedAttempt[],
  moved: readonly MovedDestination[],
  now: number,
): OperationalNotice[] {
  const notices: OperationalNotice[] = [];
  const byId = new Map(moved.map((m) => [m.destinationId, m]));
  const lastFailure = new Map<string, CompletedAttempt>();
  for (const c of completed) if (c.status !== 'delivered') lastFailure.set(c.attempt.destinationId, c);
  for (const m of moved) {
    const about = { tenantId: m.tenantId, destinationId: m.destinationId, occurredAt: now };
    const id = m.destinationId;
    if (m.disabled) {
      notices.push({
        ...about,
        type: 'sluice.destination.disabled',
        data: { reason: 'the destination answered 410 Gone', statusCode: 410 },
        key: `disabled:${id}:${now}`,
      });
    }
    if (m.health.state === 'suspended' && m.from !== 'suspended') {
      const failed = lastFailure.get(id);
      const lastError = failed === undefined ? undefined : errorOf(failed);
      notices.push({
        ...about,
        type: 'sluice.destination.suspended',
        data: {
          reason: m.health.suspendReason ?? 'consecutive',
          // In a row; the window's share of failures is `failureRate`.
          failures: m.health.consecutiveFailures,
          failureRate: failureRate(m.health) ?? 1,
          ...(lastError === undefined ? {} : { lastError }),
          nextProbeAt: iso(m.health.nextProbeAt),
        },
        key: `suspended:${id}:${now}`,
      });
    } else if (m.from === 'suspended' && m.health.state !== 'suspended') {
      notices.push({
        ...about,
        type: 'sluice.destination.recovered',
        data: { suspendedForMs: Math.max(0, now - (m.suspendedSince ?? now)) },
        key: `recovered:${id}:${now}`,
      });
    }
  }
  for (const c of completed) {
    if (c.status !== 'dead' || c.event === undefined || isReservedType(c.event.type)) continue;
    const { attempt: a } = c;
    const stateAfter = byId.get(a.destinationId)?.health.state ?? 'healthy';
    if (isHeld(classifyAttempt(a.statusCode, a.errorCode), stateAfter, c.probe === true)) continue;
    const lastError = errorOf(c);
    notices.push({
      tenantId: c.event.tenantId,
      destinationId: a.destinationId,
      occurredAt: now,
      type: 'sluice.delivery.dead',
      data: {
        deliveryId: a.deliveryId,
        eventId: c.event.id,
        eventType: c.event.type,
        attempts: a.attempt,
        ...(a.statusCode === null ? {} : { lastStatusCode: a.statusCode }),
        ...(lastError === undefined ? {} : { lastError }),
      },
      key: `dead:${a.deliveryId}:${a.attempt}`,
    });
  }
  return notices;
}

/**
 * What a completion batch returns: the health changes, and (`notified`) the destinations
 * its operational events gave deliveries to, which the caller wakes.
 */
export type CompletionChanges = HealthChange[] & { notified?: string[] };
