/**
 * The API's contract (docs/api.md) as zod schemas: the one description of every request and
 * response. Routes validate with them (fastify-type-provider-zod), handlers are typed by
 * them, responses are serialized through them, and `/openapi.json` is generated from them —
 * there is no second copy to drift. Objects in requests are strict: an unknown field is a
 * 400, never ignored.
 */

import {
  DELIVERY_STATUSES,
  EVENT_TYPE,
  EVENT_TYPE_PATTERN,
  isValidSecret,
  ORDERINGS,
  PERIODS,
} from '@sluice/core';
import { z } from 'zod';
import { Health } from './contract-health.ts';
import { AuthInput, AuthView, HeadersInput, httpUrl, TlsInput, TlsView } from './contract-receiver.ts';
import { FilterInput, FilterView, TransformInput, TransformView } from './contract-sent.ts';

export {
  ErrorClass,
  Health,
  HealthState,
  HealthTransition,
  HealthWithTransitions,
} from './contract-health.ts';

export const idOf = (prefix: string) =>
  z.string().regex(new RegExp(`^${prefix}_[0-9a-z]{26}$`), `must be a ${prefix}_ id`);

const isoTime = z.iso.datetime();

/** Free text the store keeps: no NUL character (Postgres text cannot hold one). */
const text = (max: number) =>
  z
    .string()
    .min(1)
    .max(max)
    .refine((value) => !value.includes('\u0000'), 'must not contain NUL characters');

// ---------------------------------------------------------------- errors

/**
 * Every `error.code` the API answers (docs/api.md "Errors"). The document lists them, so the
 * typed client's `ServerErrorCode` is generated from this list.
 */
export const ERROR_CODES = [
  'validation_failed',
  'unauthorized',
  'forbidden',
  'not_found',
  'conflict',
  'payload_too_large',
  'destination_not_allowed',
  'rate_limited',
  'request_header_too_large',
  'unknown_event_type',
  'unavailable',
  'internal',
] as const;

export const ErrorBody = z
  .object({
    error: z.object({
      code: z.enum(ERROR_CODES).meta({ description: 'Stable, machine-readable (docs/api.md "Errors").' }),
      message: z.string(),
      details: z.unknown(),
    }),
  })
  .meta({ id: 'Error' });

// ---------------------------------------------------------------- shared pieces

export const Period = z.enum(PERIODS as ['second', 'minute', 'hour']);

export const RateLimit = z
  .strictObject({
    limit: z.int().min(1).max(1_000_000),
    period: Period,
    burst: z.int().min(1).max(1_000_000).optional().meta({
      description:
        'A token bucket of this capacity refilled at `limit` per period: up to `burst` requests at once after an idle spell, the long-run rate `limit`. At least `limit`; absent: no burst.',
    }),
  })
  .refine((r) => r.burst === undefined || r.burst >= r.limit, {
    message: 'burst must be at least the limit',
    path: ['burst'],
  })
  .meta({
    id: 'RateLimit',
    description: 'Most requests in any sliding window of one period (the burst, where one is set).',
  });

export const Ordering = z.enum(ORDERINGS).meta({
  id: 'Ordering',
  description:
    '`fifo`: first attempts leave one at a time in the order the events were accepted (a failing one is retried later and blocks nothing); `none`: no ordering, concurrency as allowed. Every request carries `webhook-sequence` either way.',
});

export const RetryPolicy = z
  .strictObject({
    maxAttempts: z.int().min(1).max(50),
    initialDelayMs: z.int().min(0).max(86_400_000),
    maxDelayMs: z
      .int()
      .min(0)
      .max(7 * 86_400_000),
  })
  .meta({ id: 'RetryPolicy' });

const eventTypePattern = z
  .string()
  .min(1)
  .max(200)
  .regex(EVENT_TYPE_PATTERN, 'must be a type, `prefix.*` or `*`');
const eventType = z.string().min(1).max(200).regex(EVENT_TYPE, 'must be a dotted event type, no wildcard');
const secret = z.string().refine(isValidSecret, 'must be whsec_ followed by a base64 key of 16 to 128 bytes');

export const ListQuery = z.strictObject({
  limit: z.coerce.number().int().min(1).max(500).default(50),
  cursor: z.string().min(1).max(200).optional(),
  tenantId: idOf('ten').optional().meta({ description: 'Admin token only: the tenant to act for.' }),
});

/** A route that takes no query parameter: any is a 400. */
export const NoQuery = z.strictObject({});

export const TenantQuery = z.strictObject({
  tenantId: idOf('ten').optional().meta({ description: 'Admin token only: the tenant to act for.' }),
});

export const listOf = <T extends z.ZodType>(item: T) =>
  z.object({ data: z.array(item), nextCursor: z.string().nullable() });

/**
 * The body of a PATCH: the fields named change, the others stay. One that names none
 * changes nothing and is a mistake: `400 validation_failed`, "at least one field", at the
 * object's path (the body's: ``); the OpenAPI document says `minProperties: 1`.
 */
export const patchOf = <T extends z.ZodObject>(fields: T) =>
  fields.refine((patch) => Object.keys(patch).length > 0, 'at least one field').meta({ minProperties: 1 });

// ---------------------------------------------------------------- tenants

export const CreateTenant = z.strictObject({ name: text(200) });

const quotaValue = (description: string) =>
  z.number().int().min(1).max(1_000_000_000).nullable().meta({ description });

/** The operator's quotas of a tenant (docs/api.md "Tenant quotas"); null: the operator-wide default. */
export const TenantQuota = z
  .strictObject({
    eventsPerSecond: quotaValue(
      'Events a second this tenant may post (a second of burst); null: the default.',
    ),
    pendingEvents: quotaValue('Most events of this tenant not yet delivered; null: the default.'),
  })
  .meta({ id: 'TenantQuota' });

export const Tenant = z
  .object({ id: z.string(), name: z.string(), createdAt: isoTime, quota: TenantQuota })
  .meta({ id: 'Tenant' });

/** The operator's change to a tenant: the fields named change, the others stay. */
export const PatchTenant = patchOf(
  z.strictObject({ name: text(200).optional(), quota: patchOf(TenantQuota.partial()).optional() }),
).meta({ id: 'PatchTenant' });

export const TenantWithKey = Tenant.extend({
  apiKey: z.string().meta({ description: 'Shown once; stored only as a hash.' }),
}).meta({ id: 'TenantWithKey' });

// ---------------------------------------------------------------- destinations

const destinationFields = {
  name: text(200).nullable(),
  url: httpUrl,
  rateLimit: RateLimit,
  maxConcurrency: z.int().min(1).max(10_000).nullable(),
  adaptive: z.boolean().meta({
    description:
      'Adaptive pacing: back off on 429, 503, Retry-After or rising latency, recover toward the limit, never above it.',
  }),
  ordering: Ordering,
  eventTypes: z.array(eventTypePattern).min(1).max(100).meta({
    description:
      "The events it gets: exact types, `prefix.*`, or `*` (every type but Sluice's own `sluice.…` operational events, which it gets by naming them or `sluice.*`).",
  }),
  retry: RetryPolicy,
  timeoutMs: z.int().min(100).max(120_000),
  headers: HeadersInput,
  auth: AuthInput,
  tls: TlsInput,
  filter: FilterInput,
  transform: TransformInput,
  secret,
};

export const CreateDestination = z.strictObject({
  name: destinationFields.name.optional(),
  url: destinationFields.url,
  rateLimit: destinationFields.rateLimit,
  maxConcurrency: destinationFields.maxConcurrency.optional(),
  adaptive: destinationFields.adaptive.optional().meta({ description: 'Default false.' }),
  ordering: destinationFields.ordering.optional(),
  eventTypes: destinationFields.eventTypes.optional(),
  retry: destinationFields.retry.optional(),
  timeoutMs: destinationFields.timeoutMs.optional(),
  headers: destinationFields.headers.nullable().optional(),
  auth: destinationFields.auth.nullable().optional(),
  tls: destinationFields.tls.nullable().optional(),
  filter: destinationFields.filter.nullable().optional(),
  transform: destinationFields.transform.nullable().optional(),
  secret: destinationFields.secret.optional(),
});

export const PatchDestination = patchOf(
  z.strictObject({
    name: destinationFields.name.optional(),
    url: destinationFields.url.optional(),
    rateLimit: destinationFields.rateLimit.optional(),
    maxConcurrency: destinationFields.maxConcurrency.optional(),
    adaptive: destinationFields.adaptive.optional(),
    ordering: destinationFields.ordering.optional(),
    eventTypes: destinationFields.eventTypes.optional(),
    retry: destinationFields.retry.optional(),
    timeoutMs: destinationFields.timeoutMs.optional(),
    headers: destinationFields.headers
      .nullable()
      .optional()
      .meta({ description: 'Replaces them all; null: none.' }),
    auth: destinationFields.auth.nullable().optional(),
    tls: destinationFields.tls.nullable().optional(),
    filter: destinationFields.filter.nullable().optional(),
    transform: destinationFields.transform.nullable().optional(),
    secret: destinationFields.secret.optional(),
  }),
);

export const DestinationState = z.enum(['active', 'paused', 'disabled']);

// ---------------------------------------------------------------- endpoint health (ADR 0007)

export const HealthQuery = z.strictObject({
  limit: z.coerce.number().int().min(1).max(500).default(50),
  tenantId: idOf('ten').optional().meta({ description: 'Admin token only: the tenant to act for.' }),
});

export const Destination = z
  .object({
    id: z.string(),
    tenantId: z.string(),
    name: z.string().nullable(),
    url: z.string(),
    rateLimit: RateLimit,
    maxConcurrency: z.int().nullable(),
    adaptive: z.boolean(),
    ordering: Ordering,
    eventTypes: z.array(z.string()),
    retry: RetryPolicy,
    timeoutMs: z.int(),
    headers: z.record(z.string(), z.string()),
    auth: AuthView.nullable(),
    tls: TlsView.nullable(),
    filter: FilterView.nullable(),
    transform: TransformView.nullable(),
    state: DestinationState,
    disabledReason: z.string().nullable(),
    health: Health,
    createdAt: isoTime,
    updatedAt: isoTime,
  })
  .meta({ id: 'Destination' });

export const DestinationWithSecret = Destination.extend({ secret: z.string() }).meta({
  id: 'DestinationWithSecret',
});

export const RotatedSecret = z
  .object({ secret: z.string(), previousSecretExpiresAt: isoTime.nullable() })
  .meta({ id: 'RotatedSecret' });

/** The one answer besides create and rotate that holds signing secrets (stored encrypted). */
export const DestinationSecrets = z
  .object({
    secret: z.string().meta({ description: 'The current signing secret.' }),
    previous: z
      .array(z.object({ secret: z.string(), expiresAt: isoTime }))
      .meta({ description: 'Rotated-out secrets that still sign beside it, each until its expiresAt.' }),
  })
  .meta({ id: 'DestinationSecrets' });

export const Replay = z.strictObject({
  status: z.literal('dead'),
  since: isoTime.optional().meta({ description: 'Only deliveries that died at or after this time.' }),
});

export const Count = z.object({ count: z.int() }).meta({ id: 'Count' });

export const StatsQuery = z.strictObject({
  seconds: z.coerce.number().int().min(1).max(86_400).default(300),
  tenantId: idOf('ten').optional(),
});

export const Stats = z
  .object({
    rateLimit: RateLimit,
    state: DestinationState,
    pending: z.int(),
    queued: z.int(),
    inFlight: z.int(),
    oldestPendingAgeMs: z.number(),
    delivered: z.int(),
    dead: z.int(),
    maxSentInAnyWindow: z.int().meta({
      description:
        'The most requests started in any sliding window of one period (at most the burst where one is set, else the limit).',
    }),
    bucketRefusals: z.int().nullable().meta({
      description:
        'With a burst: requests a token bucket of capacity `burst` refilled at `limit` per period would have refused (0 when the long-run rate held); null without a burst.',
    }),
    effectiveLimit: z.int().meta({
      description:
        'The limit the rate limiter plans with now: the configured one, or lower while adaptive pacing backs off.',
    }),
    backingOff: z
      .boolean()
      .meta({ description: 'Adaptive pacing holds the rate below the limit, or waits out a Retry-After.' }),
    perSecond: z.array(z.object({ t: isoTime, sent: z.int() })),
    limitChanges: z.array(z.object({ at: isoTime, from: RateLimit, to: RateLimit })).meta({
      description:
        'The changes of `rateLimit` over the span, oldest first, each with the limit before and after: before the first, its `from` was in force; after the last, `rateLimit`.',
    }),
  })
  .meta({ id: 'DestinationStats' });

export const OverviewQuery = ListQuery.extend({
  seconds: z.coerce
    .number()
    .int()
    .min(1)
    .max(86_400)
    .default(3_600)
    .meta({ description: 'The span that `delivered` and `dead` count over.' }),
});

export const Backlog = z
  .object({
    pending: z.int(),
    queued: z.int(),
    inFlight: z.int(),
    effectiveLimit: z.int().meta({ description: 'The limit planned with now (adaptive pacing).' }),
    backingOff: z.boolean(),
    oldestPendingAgeMs: z.number(),
    delivered: z.int().meta({ description: 'Delivered over the span.' }),
    dead: z.int().meta({ description: 'Died over the span.' }),
  })
  .meta({ id: 'Backlog' });

export const DestinationOverview = Destination.extend({ stats: Backlog }).meta({ id: 'DestinationOverview' });

// ---------------------------------------------------------------- events

/**
 * An event's payload: any JSON value. The body was parsed as JSON, so every value in it is
 * one already; `z.json()` would walk the whole document again to prove it, a large share of
 * the single box's work per accepted event (docs/performance.md, Decisions).
 */
export const jsonValue = z.unknown().meta({ description: 'Any JSON value.' }) as unknown as z.ZodType<
  z.infer<ReturnType<typeof z.json>>
>;

export const NewEvent = z
  .strictObject({
    type: eventType,
    payload: jsonValue,
    destinationId: idOf('dst').optional(),
    destinationIds: z.array(idOf('dst')).min(1).max(100).optional(),
    // `sluice:` keys are Sluice's own (its operational events'): one taken by a tenant
    // would silently swallow the event it names.
    idempotencyKey: text(255)
      .refine((k) => !k.startsWith('sluice:'), 'keys beginning with sluice: are reserved for Sluice')
      .optional(),
  })
  .refine((e) => !(e.destinationId && e.destinationIds), {
    path: ['destinationIds'],
    message: 'give destinationId or destinationIds, not both',
  })
  .meta({ id: 'NewEvent' });

export const MAX_BATCH_EVENTS = 1_000;

export const NewEventBatch = z.strictObject({ events: z.array(NewEvent).min(1).max(MAX_BATCH_EVENTS) });

export const AcceptedEvent = z
  .object({ id: z.string(), deliveries: z.array(z.object({ id: z.string(), destinationId: z.string() })) })
  .meta({ id: 'AcceptedEvent' });

export const AcceptedEventBatch = z
  .object({ data: z.array(AcceptedEvent).meta({ description: 'One result per event, in order.' }) })
  .meta({ id: 'AcceptedEventBatch' });

// ---------------------------------------------------------------- deliveries

export const DeliveryStatus = z.enum(DELIVERY_STATUSES as ['pending', ...string[]]);

export const Attempt = z
  .object({
    id: z.string(),
    attempt: z.int(),
    statusCode: z.int().nullable(),
    errorCode: z.string().nullable(),
    error: z.string().nullable(),
    latencyMs: z.number(),
    responseExcerpt: z.string().nullable(),
    startedAt: isoTime,
    finishedAt: isoTime,
  })
  .meta({ id: 'Attempt' });

export const Delivery = z
  .object({
    id: z.string(),
    eventId: z.string(),
    destinationId: z.string(),
    sequence: z.int().nullable().meta({
      description:
        "The delivery's place in its destination's order, sent as `webhook-sequence`: 1, 2, 3… per destination, no gap, in the order its deliveries are first sent (for a fifo destination, the order their events were accepted). Taken when the delivery is first claimed for sending, kept across retries and replays; null until then.",
    }),
    status: DeliveryStatus,
    attemptCount: z.int(),
    nextAttemptAt: isoTime.nullable(),
    lastError: z.string().nullable(),
    createdAt: isoTime,
    updatedAt: isoTime,
  })
  .meta({ id: 'Delivery' });

export const DeliveryWithAttempts = Delivery.extend({ attempts: z.array(Attempt) }).meta({
  id: 'DeliveryWithAttempts',
});

export const DeliveryQuery = ListQuery.extend({
  destinationId: idOf('dst').optional(),
  eventId: idOf('evt').optional(),
  status: DeliveryStatus.optional(),
  since: isoTime
    .optional()
    .meta({ description: 'Only deliveries last changed at or after this time (dead ones: died since).' }),
});

export const Event = z
  .object({
    id: z.string(),
    type: z.string(),
    payload: jsonValue,
    idempotencyKey: z.string().nullable(),
    createdAt: isoTime,
    deliveries: z.array(Delivery),
  })
  .meta({ id: 'Event' });

export const IdParams = (prefix: string) => z.strictObject({ id: idOf(prefix) });

// ---------------------------------------------------------------- backlog alerts (ADR 0009)

export const AlertKind = z.enum(['pending_count', 'pending_age']);

export const Alert = z
  .object({
    destinationId: z.string(),
    tenantId: z.string(),
    kind: AlertKind.meta({
      description: 'pending_count: pending deliveries; pending_age: seconds the oldest due one has waited.',
    }),
    threshold: z.int().meta({ description: 'The threshold it passed (a count, or seconds).' }),
    value: z.int().meta({ description: 'What was observed when it was raised.' }),
    raisedAt: isoTime,
  })
  .meta({ id: 'Alert', description: 'A backlog alert that is firing.' });

export const AlertList = z.object({ data: z.array(Alert) }).meta({ id: 'AlertList' });
