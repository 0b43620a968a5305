/**
 * The event-type catalog's rules (docs/api.md "Event-type catalog") and Sluice's own
 * operational event types, defined once here: the API lists them in the catalog, the
 * OpenAPI document's `webhooks` and the emitter use these same definitions.
 *
 * A catalog name is an event's own type (`EVENT_TYPE`: dotted words, no wildcard) of at most
 * 200 characters; names beginning with `sluice.` are Sluice's (reserved): an operator cannot
 * create, change or delete them, and a tenant cannot post an event of such a type.
 */

import { EVENT_TYPE, RESERVED_PREFIX } from './event-types.ts';

export { RESERVED_PREFIX };
export const MAX_EVENT_TYPE_LENGTH = 200;

/** Whether `type` is one of Sluice's reserved types (`sluice.…`). */
export const isReservedType = (type: string): boolean => type.startsWith(RESERVED_PREFIX);

/** Why `name` cannot name a catalog entry, or null when it can. */
export function catalogNameProblem(name: string): string | null {
  if (name.length === 0 || name.length > MAX_EVENT_TYPE_LENGTH)
    return `must be 1 to ${MAX_EVENT_TYPE_LENGTH} characters`;
  if (!EVENT_TYPE.test(name)) return 'must be dotted words of letters, digits, _ and -, no wildcard';
  if (isReservedType(name)) return `names beginning with ${RESERVED_PREFIX} are reserved`;
  return null;
}

/** A type of the catalog: its name, what it means, and optionally its payload's JSON Schema and an example. */
export interface EventTypeDefinition {
  name: string;
  description: string;
  schema: Record<string, unknown> | null;
  example: unknown;
}

type Properties = Record<string, Record<string, unknown>>;

const EXAMPLE_TENANT = 'ten_01jd6x9m0a8d2q5r7t9v1w3y5z';
const EXAMPLE_DESTINATION = 'dst_01jd6x9n4b6c8e0g2h4j6k8m0p';
const EXAMPLE_AT = '2026-01-15T10:30:00.000Z';

/**
 * An operational event's definition: its payload is `{ type, tenantId, destinationId,
 * occurredAt, data }` with `data` as `properties` (`required` of them always present).
 */
function operational(
  name: string,
  description: string,
  properties: Properties,
  required: string[],
  data: Record<string, unknown>,
): EventTypeDefinition {
  return {
    name,
    description,
    schema: {
      type: 'object',
      required: ['type', 'tenantId', 'destinationId', 'occurredAt', 'data'],
      properties: {
        type: { const: name },
        tenantId: { type: 'string' },
        destinationId: { type: 'string' },
        occurredAt: { type: 'string', format: 'date-time' },
        data: { type: 'object', required, properties },
      },
    },
    example: {
      type: name,
      tenantId: EXAMPLE_TENANT,
      destinationId: EXAMPLE_DESTINATION,
      occurredAt: EXAMPLE_AT,
      data,
    },
  };
}

const int = { type: 'integer', minimum: 0 };
const str = { type: 'string' };
const time = { type: 'string', format: 'date-time' };
/** `threshold` in the kind's unit: deliveries (`pending_count`) or seconds (`pending_age`). */
const backlog: Properties = {
  pending: int,
  oldestPendingAgeMs: int,
  threshold: int,
  kind: { enum: ['pending_count', 'pending_age'] },
};
const backlogExample = {
  pending: 12_000,
  oldestPendingAgeMs: 95_000,
  threshold: 10_000,
  kind: 'pending_count',
};

/** Sluice's own event types (`sluice.…`), by name: read-only entries of every catalog. */
export const BUILT_IN_EVENT_TYPES: readonly EventTypeDefinition[] = [
  operational(
    'sluice.destination.disabled',
    'A destination was disabled: it answered 410 Gone, or an operator disabled it.',
    { reason: str, statusCode: { type: 'integer' } },
    ['reason'],
    { reason: 'the destination answered 410 Gone', statusCode: 410 },
  ),
  operational(
    'sluice.destination.suspended',
    "A destination's circuit breaker opened: its deliveries wait until a probe succeeds.",
    {
      reason: { enum: ['consecutive', 'failure_rate'] },
      failures: int,
      failureRate: { type: 'number', minimum: 0, maximum: 1 },
      lastError: str,
      nextProbeAt: time,
    },
    ['reason', 'failures', 'failureRate', 'nextProbeAt'],
    {
      reason: 'failure_rate',
      failures: 3,
      failureRate: 0.75,
      lastError: 'timeout after 60000 ms',
      nextProbeAt: '2026-01-15T10:31:00.000Z',
    },
  ),
  operational(
    'sluice.destination.certificate_expiring',
    "A destination's client certificate (tls) stops being valid in less than 14 days: give it a new one.",
    { subject: str, notAfter: time, fingerprint256: str, daysLeft: int },
    ['subject', 'notAfter', 'fingerprint256', 'daysLeft'],
    {
      subject: 'CN=sluice-client',
      notAfter: '2026-01-29T10:30:00.000Z',
      fingerprint256: 'AB:CD:…',
      daysLeft: 13,
    },
  ),
  operational(
    'sluice.destination.recovered',
    "A suspended destination's circuit breaker closed again.",
    { suspendedForMs: int },
    ['suspendedForMs'],
    { suspendedForMs: 60_000 },
  ),
  operational(
    'sluice.delivery.dead',
    "A delivery's attempts were exhausted: it is dead until replayed or retried.",
    {
      deliveryId: str,
      eventId: str,
      eventType: str,
      attempts: int,
      lastStatusCode: { type: 'integer' },
      lastError: str,
    },
    ['deliveryId', 'eventId', 'eventType', 'attempts'],
    {
      deliveryId: 'dlv_01jd6xa2c4e6g8j0k2m4n6p8r0',
      eventId: 'evt_01jd6xa1b3d5f7h9k1m3n5q7s9',
      eventType: 'order.paid',
      attempts: 8,
      lastStatusCode: 500,
      lastError: 'HTTP 500',
    },
  ),
  operational(
    'sluice.backlog.raised',
    "A backlog alert of one of the tenant's destinations was raised.",
    backlog,
    ['pending', 'oldestPendingAgeMs', 'threshold'],
    backlogExample,
  ),
  operational(
    'sluice.backlog.resolved',
    "A backlog alert of one of the tenant's destinations was resolved.",
    backlog,
    ['pending', 'oldestPendingAgeMs', 'threshold'],
    { ...backlogExample, pending: 40 },
  ),
  operational(
    'sluice.secret.rotated',
    "A destination's signing secret was rotated; the previous one signs too until it expires.",
    { previousSecretExpiresAt: time },
    ['previousSecretExpiresAt'],
    { previousSecretExpiresAt: '2026-01-16T10:30:00.000Z' },
  ),
  operational(
    'sluice.test',
    'A test event sent to one destination (POST /v1/destinations/:id/test) with no type of its own.',
    { test: { type: 'boolean' } },
    [],
    { test: true },
  ),
];

/** A built-in type by name, or undefined. */
export function builtInEventType(name: string): EventTypeDefinition | undefined {
  return BUILT_IN_EVENT_TYPES.find((t) => t.name === name);
}
