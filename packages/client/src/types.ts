/**
 * The API's shapes, written out so the package stands alone: its JavaScript and its
 * declarations import nothing, neither zod nor the server's packages. The server's zod
 * contract (packages/api/src/contract.ts) is still the one description:
 * packages/api/src/client-types.test.ts proves at type-check time that each type here is
 * exactly the contract's (requests its input type, what you may send; answers its output
 * type, what the server answers), so a contract change not made here fails the typecheck.
 */

/** Any JSON value: an event's payload, as the server answers it. */
export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };

// ---- common

/** One page of a list: `nextCursor` is null on the last page. */
export interface Page<T> {
  data: T[];
  nextCursor: string | null;
}

/** `?limit=` (1–500, default 50) and `?cursor=` (a previous page's `nextCursor`). */
export interface ListParams {
  limit?: number;
  cursor?: string;
}

/** The body of every error answer. */
export interface ErrorBody {
  error: {
    /** Stable, machine-readable: `validation_failed`, `unauthorized`, … */
    code: string;
    message: string;
    details: unknown;
  };
}

export type Period = 'second' | 'minute' | 'hour';

/** Most requests in any sliding window of one period (the burst, where one is set). */
export interface RateLimit {
  /** 1–1,000,000. */
  limit: number;
  period: Period;
  /**
   * A token bucket of this capacity refilled at `limit` per period: up to `burst` requests
   * at once after an idle spell, the long-run rate `limit`. At least `limit`; absent: no burst.
   */
  burst?: number | undefined;
}

/**
 * `fifo`: first attempts leave one at a time in the order the events were accepted (a
 * failing one is retried later and blocks nothing); `none`: no ordering.
 */
export type Ordering = 'none' | 'fifo';

export interface RetryPolicy {
  /** 1–50. */
  maxAttempts: number;
  initialDelayMs: number;
  maxDelayMs: number;
}

// ---- tenants

export interface CreateTenantInput {
  name: string;
}

/**
 * The operator's quotas of a tenant: a number is the tenant's own, null falls back to the
 * operator-wide default (none unless the operator set one). Past a quota, ingest answers
 * `429 rate_limited` with `Retry-After` (`SluiceError.retryAfterSeconds`).
 */
export interface TenantQuota {
  /** Events a second (room for one second's burst). */
  eventsPerSecond: number | null;
  /** Most events not yet delivered. */
  pendingEvents: number | null;
}

export interface Tenant {
  id: string;
  name: string;
  createdAt: string;
  quota: TenantQuota;
}

/** `tenants.update`: the fields named change, the others stay. */
export interface UpdateTenantInput {
  name?: string | undefined;
  quota?:
    | {
        eventsPerSecond?: number | null | undefined;
        pendingEvents?: number | null | undefined;
      }
    | undefined;
}

/** A tenant as created: its API key is in this answer only. */
export interface TenantWithKey extends Tenant {
  apiKey: string;
}

/** One of a tenant's API keys as listed: never the key itself. */
export interface TenantKey {
  id: string;
  /** The key's first characters, to tell keys apart; null for a key made before they were kept. */
  prefix: string | null;
  createdAt: string;
  /** When a request last used it, to within a minute; null: never. */
  lastUsedAt: string | null;
}

/** A key as created: `apiKey` is in this answer only. */
export interface CreatedKey {
  id: string;
  apiKey: string;
}

// ---- destinations

export interface CreateDestinationInput {
  name?: string | null | undefined;
  url: string;
  rateLimit: RateLimit;
  /** Requests open at once; absent or null: no cap. */
  maxConcurrency?: number | null | undefined;
  /** Adaptive pacing (default false): back off on 429, 503, Retry-After or rising latency. */
  adaptive?: boolean | undefined;
  ordering?: Ordering | undefined;
  /**
   * Exact types, `prefix.*` or `*`; default `['*']`. `*` matches every type but Sluice's own
   * `sluice.…` operational events: name them, or `sluice.*`, to get them.
   */
  eventTypes?: string[] | undefined;
  retry?: RetryPolicy | undefined;
  /** One attempt's timeout, 100–120,000 ms; default 15,000. */
  timeoutMs?: number | undefined;
  /** `whsec_` and a base64 key of 16 to 128 bytes; generated when absent. */
  secret?: string | undefined;
}

/** A patch: at least one field. */
export type UpdateDestinationInput = Partial<CreateDestinationInput>;

export type DestinationState = 'active' | 'paused' | 'disabled';

/** Endpoint health: the circuit breaker of a destination. */
export type HealthState = 'healthy' | 'degraded' | 'suspended';

/** Endpoint health, the circuit breaker of a destination (on every `Destination` too). */
export interface Health {
  state: HealthState;
  /** When this state began; null: since creation. */
  since: string | null;
  consecutiveFailures: number;
  /** Suspended only: when the next probe may go. */
  nextProbeAt: string | null;
  /** `connection`, `dns`, `timeout`, `tls` or `5xx`: the class of the last failure that counted. */
  lastErrorClass: string | null;
}

export interface HealthTransition {
  at: string;
  from: HealthState;
  to: HealthState;
  reason: 'failures' | 'success' | 'operator';
  consecutiveFailures: number;
  errorClass: string | null;
}

/** `GET /v1/destinations/:id/health`: the health and its latest transitions, newest first. */
export interface HealthWithTransitions extends Health {
  transitions: HealthTransition[];
}

export interface Destination {
  id: string;
  tenantId: string;
  name: string | null;
  url: string;
  rateLimit: RateLimit;
  maxConcurrency: number | null;
  adaptive: boolean;
  ordering: Ordering;
  eventTypes: string[];
  retry: RetryPolicy;
  timeoutMs: number;
  state: DestinationState;
  disabledReason: string | null;
  health: Health;
  createdAt: string;
  updatedAt: string;
}

/** A destination as created: with its current signing secret. */
export interface DestinationWithSecret extends Destination {
  secret: string;
}

export interface RotatedSecret {
  secret: string;
  previousSecretExpiresAt: string | null;
}

/** A destination's signing secrets: the current one and the rotated-out ones still signing. */
export interface DestinationSecrets {
  secret: string;
  /** Each signs beside the current one until its `expiresAt`. */
  previous: { secret: string; expiresAt: string }[];
}

/** The replay body; `status` defaults to `dead`, the only status that can be replayed. */
export interface ReplayInput {
  status?: 'dead';
  /** Only deliveries that died at or after this ISO time. */
  since?: string | undefined;
}

export interface ReplayResult {
  count: number;
}

export interface DestinationStats {
  rateLimit: RateLimit;
  state: DestinationState;
  pending: number;
  queued: number;
  inFlight: number;
  oldestPendingAgeMs: number;
  delivered: number;
  dead: number;
  /** The most requests started in any sliding window of one period (at most the burst, else the limit). */
  maxSentInAnyWindow: number;
  /** With a burst: requests a token bucket would have refused (0 when the rate held); null without one. */
  bucketRefusals: number | null;
  /** The limit the rate limiter plans with now: the configured one, or lower while adaptive pacing backs off. */
  effectiveLimit: number;
  /** Adaptive pacing holds the rate below the limit, or waits out a Retry-After. */
  backingOff: boolean;
  perSecond: { t: string; sent: number }[];
  /**
   * The changes of `rateLimit` over the span, oldest first: before the first, its `from` was
   * in force; after the last, `rateLimit`.
   */
  limitChanges: { at: string; from: RateLimit; to: RateLimit }[];
}

/** A destination's backlog now, and its outcomes over the span. */
export interface Backlog {
  pending: number;
  queued: number;
  inFlight: number;
  effectiveLimit: number;
  backingOff: boolean;
  oldestPendingAgeMs: number;
  delivered: number;
  dead: number;
}

/** A destination with its backlog and the span's outcomes (`GET /v1/destinations/stats`). */
export interface DestinationOverview extends Destination {
  stats: Backlog;
}

export interface OverviewParams extends ListParams {
  /** The span `delivered` and `dead` count over, in seconds (1–86400, default 3600). */
  seconds?: number;
}

export interface StatsParams {
  /** The span, in seconds (1–86400, default 300). */
  seconds?: number;
}

export interface HealthParams {
  /** How many transitions, newest first (1–500, default 50). */
  limit?: number;
}

// ---- events

export interface NewEvent {
  /** A dotted event type, no wildcard. */
  type: string;
  /** Any value `JSON.stringify` keeps: it is sent as JSON. */
  payload: unknown;
  destinationId?: string | undefined;
  /** 1–100 destinations; not with `destinationId`. */
  destinationIds?: string[] | undefined;
  idempotencyKey?: string | undefined;
}

export interface AcceptedEvent {
  id: string;
  deliveries: { id: string; destinationId: string }[];
}

export interface AcceptedEventBatch {
  /** One result per event, in order. */
  data: AcceptedEvent[];
}

/** An event with its deliveries. */
export interface Event {
  id: string;
  type: string;
  payload: JsonValue;
  idempotencyKey: string | null;
  createdAt: string;
  deliveries: Delivery[];
}

/** An event of the event log: without its payload and its deliveries (`events.get` has both). */
export interface LoggedEvent {
  id: string;
  type: string;
  /** The size of its payload in bytes (the JSON a destination receives, UTF-8). */
  payloadBytes: number;
  idempotencyKey: string | null;
  createdAt: string;
}

export interface EventListParams extends ListParams {
  /** A type, or `prefix.*`: the types that start with `prefix.`; `*`: all. */
  type?: string;
  /** Only events with a delivery to this destination. */
  destinationId?: string;
  /** Only events accepted at or after this ISO time. */
  since?: string;
  /** Only events accepted at or before this ISO time. */
  until?: string;
}

// ---- deliveries

export type DeliveryStatus = 'pending' | 'queued' | 'delivering' | 'delivered' | 'dead' | 'cancelled';

export interface Delivery {
  id: string;
  eventId: string;
  destinationId: string;
  /** Its place in its destination's order (`webhook-sequence`); null until first claimed. */
  sequence: number | null;
  status: DeliveryStatus;
  attemptCount: number;
  nextAttemptAt: string | null;
  lastError: string | null;
  createdAt: string;
  updatedAt: string;
}

export interface Attempt {
  id: string;
  attempt: number;
  statusCode: number | null;
  errorCode: string | null;
  error: string | null;
  latencyMs: number;
  responseExcerpt: string | null;
  startedAt: string;
  finishedAt: string;
}

export interface DeliveryWithAttempts extends Delivery {
  attempts: Attempt[];
}

export interface DeliveryListParams extends ListParams {
  destinationId?: string;
  eventId?: string;
  status?: DeliveryStatus;
  /** Only deliveries last changed at or after this ISO time (dead ones: died since). */
  since?: string;
}

// ---- backlog alerts

export type AlertKind = 'pending_count' | 'pending_age';

/** A backlog alert firing now: `pending_count` (deliveries) or `pending_age` (seconds). */
export interface Alert {
  destinationId: string;
  tenantId: string;
  kind: AlertKind;
  /** The threshold it passed (a count, or seconds). */
  threshold: number;
  /** What was observed when it was raised. */
  value: number;
  raisedAt: string;
}

/** `POST /v1/destinations/:id/test`: both optional (type `sluice.test`; the payload from the catalog). */
export interface TestEventInput {
  type?: string | undefined;
  payload?: JsonValue | undefined;
}
