/**
 * The system of record, as the engine and the API use it. The single box implements it on
 * SQLite (`@sluice/store-sqlite`); distributed mode on Postgres. Both pass one conformance
 * suite. Times are milliseconds since the epoch.
 *
 * Glossary:
 * - due: a `pending` delivery whose `nextAttemptAt` has come;
 * - claim: move due deliveries to `queued` for one tick, oldest first;
 * - complete: record an attempt and move its delivery on (DESIGN flow 3);
 * - requeue: return `queued`/`delivering` deliveries left by a crash to `pending`.
 */

import type {
  BacklogSample,
  ClaimOrder,
  DeliveryStatus,
  ErrorClass,
  FiringAlert,
  Health,
  HealthPolicy,
  HealthState,
  Ordering,
  RateLimit,
  RetryPolicy,
} from '@sluice/core';

/** A delivery claimed before a cutoff (`Store.staleClaims`). */
export interface StaleClaim {
  id: string;
  destinationId: string;
  /** Attempts made before the claimed one. */
  attempts: number;
}

export interface Tenant {
  id: string;
  name: string;
  createdAt: number;
}

export type DestinationState = 'active' | 'paused' | 'disabled';

export interface DestinationSecret {
  secret: string;
  /** When a rotated-out secret stops signing; null for the current one. */
  expiresAt: number | null;
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
    | 'secrets'
    | 'state'
    | 'disabledReason'
  >
>;

export interface Delivery {
  id: string;
  eventId: string;
  destinationId: string;
  tenantId: string;
  /**
   * 1, 2, 3… per destination in the order its deliveries are first claimed (`webhook-sequence`),
   * kept after that; null until the first claim (docs/adr/0006).
   */
  sequence: number | null;
  status: DeliveryStatus;
  attempts: number;
  /** Attempts made before the last replay or manual retry (the policy counts from here). */
  attemptBase: number;
  nextAttemptAt: number | null;
  lastError: string | null;
  createdAt: number;
  updatedAt: number;
}

export interface Attempt {
  id: string;
  deliveryId: string;
  destinationId: string;
  /** 1-based number of this attempt within its delivery. */
  attempt: number;
  startedAt: number;
  finishedAt: number;
  statusCode: number | null;
  errorCode: string | null;
  errorMessage: string | null;
  responseExcerpt: string | null;
}

export interface NewEvent {
  type: string;
  /** The payload serialized once: the exact bytes every destination receives. */
  payload: string;
  idempotencyKey: string | null;
  destinationIds: string[];
}

export interface AcceptedEvent {
  id: string;
  deliveries: { id: string; destinationId: string }[];
}

export interface AcceptResult {
  event: AcceptedEvent;
  /** True when an earlier event with the same idempotency key answered instead. */
  replayed: boolean;
}

/** A delivery handed to the delivery queue, with what its request needs. */
export interface ClaimedDelivery {
  id: string;
  eventId: string;
  destinationId: string;
  eventType: string;
  payload: string;
  /** Its place in the destination's order (`webhook-sequence`): every claimed delivery has one. */
  sequence: number;
  /** Attempts made before this one. */
  attempts: number;
  attemptBase: number;
  eventCreatedAt: number;
  /** The one request a suspended destination gets: does the endpoint answer again? */
  probe?: boolean;
  /**
   * Published ahead of its window's room (core tick.ts `publishAhead`): its request must not
   * start before this moment (ms); the runner waits for it.
   */
  notBefore?: number;
}

/** What a claim took, and what it left for later. */
export interface Claim {
  /** In claim order; at most the `max` asked for. */
  deliveries: ClaimedDelivery[];
  /** Earliest `nextAttemptAt` of a delivery still pending after the claim, or null. */
  nextPendingAt: number | null;
}

export interface StoredEvent {
  id: string;
  tenantId: string;
  type: string;
  payload: string;
  idempotencyKey: string | null;
  createdAt: number;
}

/** One page, newest first; `next` is the id to continue after, or null at the end. */
export interface Page<T> {
  items: T[];
  next: string | null;
}

export interface PageRequest {
  limit: number;
  /** Continue after this id (exclusive). */
  after?: string | undefined;
}

export interface DeliveryFilter {
  tenantId?: string | undefined;
  destinationId?: string | undefined;
  eventId?: string | undefined;
  status?: DeliveryStatus | undefined;
  /** Only deliveries last changed at or after this time (for dead ones: when they died). */
  changedSince?: number | undefined;
}

export type RetryResult = { ok: true; delivery: Delivery } | { ok: false; reason: 'not_found' | 'conflict' };

export interface RetentionResult {
  deliveries: number;
  attempts: number;
  events: number;
  /** Endpoint-health transitions (the history `GET …/health` shows) older than the cutoff. */
  transitions: number;
}

export interface CompletedAttempt {
  attempt: Attempt;
  status: Extract<DeliveryStatus, 'delivered' | 'pending' | 'dead'>;
  nextAttemptAt: number | null;
  disableDestination: boolean;
  /** The attempt was a suspended destination's probe. */
  probe?: boolean;
  /** When to try again if the attempt is held (its destination degraded or suspended). */
  holdAt?: number | null;
}

/** A destination's health after a batch moved it: a transition, or a failed probe. */
export interface HealthChange {
  destinationId: string;
  from: HealthState;
  health: Health;
}

export interface HealthTransition {
  destinationId: string;
  at: number;
  from: HealthState;
  to: HealthState;
  reason: 'failures' | 'success' | 'operator';
  consecutiveFailures: number;
  errorClass: ErrorClass | null;
}

/** A suspended destination's probe claim: at most one delivery, and when the next may go. */
export interface ProbeClaim extends Claim {
  /** The next probe time after the claim; null when the destination is not suspended. */
  nextProbeAt: number | null;
}

export interface DestinationWork {
  /** Earliest `nextAttemptAt` of a pending delivery, or null when none is pending. */
  nextPendingAt: number | null;
  /** Deliveries `queued` or `delivering`. */
  inQueue: number;
}

export interface DestinationCounts {
  pending: number;
  inQueue: number;
  oldestPendingAt: number | null;
  delivered: number;
  dead: number;
}

/** The event an alert's change is told by, and the tenant it is accepted for (ADR 0009). */
export interface AlertNotice {
  tenantId: string;
  event: NewEvent;
}

export interface Store {
  createTenant(tenant: Tenant, apiKeyHash: string): Promise<void>;
  getTenant(id: string): Promise<Tenant | undefined>;
  listTenants(page: PageRequest): Promise<Page<Tenant>>;
  tenantByKeyHash(hash: string): Promise<Tenant | undefined>;

  createDestination(destination: NewDestination, now: number): Promise<Destination>;
  /** Deleted destinations are not found. */
  getDestination(id: string): Promise<Destination | undefined>;
  updateDestination(id: string, patch: DestinationPatch, now: number): Promise<Destination | undefined>;
  /** Deletes the destination and cancels its undelivered deliveries (dead ones too). */
  deleteDestination(id: string, now: number): Promise<boolean>;
  /** Every destination of a tenant (fan-out). */
  listDestinations(tenantId: string): Promise<Destination[]>;
  pageDestinations(tenantId: string | undefined, page: PageRequest): Promise<Page<Destination>>;

  /**
   * One transaction for all the events: all are accepted, or none. Deliveries are inserted in
   * input order (their acceptance order) with no `sequence` yet; the destinations' rows are not
   * touched, so accepts for one destination do not wait on each other.
   */
  acceptEvents(tenantId: string, events: NewEvent[], now: number): Promise<AcceptResult[]>;

  getEvent(id: string): Promise<{ event: StoredEvent; deliveries: Delivery[] } | undefined>;
  getDelivery(id: string): Promise<{ delivery: Delivery; attempts: Attempt[] } | undefined>;
  listDeliveries(filter: DeliveryFilter, page: PageRequest): Promise<Page<Delivery>>;
  /** Dead deliveries of a destination (died at or after `since`) back to pending, due now. */
  replayDead(destinationId: string, since: number | null, now: number): Promise<number>;
  /** A dead or pending delivery due now with a fresh attempt budget; others conflict. */
  retryDelivery(id: string, now: number): Promise<RetryResult>;
  /**
   * Deletes, in batches of at most `batch`, delivered and cancelled deliveries last
   * changed before `before`, their attempts, events older than `before` that have no
   * deliveries left, and endpoint-health transitions older than `before`. Dead deliveries
   * stay until replayed or deleted.
   */
  deleteExpired(before: number, batch: number): Promise<RetentionResult>;

  /**
   * Takes up to `max` deliveries due at `now`, marks them `queued`, and tells when the next
   * one left pending is due: what a tick needs, in one round trip. `order` `due` (default):
   * oldest due first, then acceptance; `sequence` (a fifo destination): the numbered ones
   * (retries, replays) lowest sequence first, then the unnumbered ones in acceptance order.
   * The claimed deliveries that have no sequence take their destination's next numbers, in claim
   * order (contiguous per destination, the counter bumped once per claim); the others keep
   * theirs. A tick's claim is exclusive per destination (DESIGN: the schedule's lease).
   */
  claimDue(destinationId: string, max: number, now: number, order?: ClaimOrder): Promise<Claim>;
  /**
   * Records the attempts, moves their deliveries on, and folds their results into each
   * destination's health (`nextHealth`), atomically: an attempt held by a degraded or
   * suspended destination (`isHeld`) goes back to pending instead of dead. Returns the
   * destinations whose health moved (a transition, or a failed probe).
   */
  completeAttempts(
    completed: CompletedAttempt[],
    now: number,
    policy?: HealthPolicy,
  ): Promise<HealthChange[]>;
  /**
   * A suspended destination's probe: when its `nextProbeAt` has come, claims its one oldest
   * pending delivery (due or not) and moves `nextProbeAt` to `holdUntil` (the probe's
   * completion sets the real next one), so no two probes overlap. A delivery claimed for the
   * first time takes its destination's next sequence, as in `claimDue`.
   */
  claimProbe(destinationId: string, now: number, holdUntil: number): Promise<ProbeClaim>;
  /** Back to healthy (an operator's resume); the change, or null when it was healthy. */
  resetHealth(destinationId: string, now: number): Promise<HealthChange | null>;
  /** The latest transitions of a destination, newest first. */
  healthTransitions(destinationId: string, limit: number): Promise<HealthTransition[]>;
  /** Destinations (not deleted) by health state. */
  healthCounts(): Promise<Record<HealthState, number>>;
  destinationWork(destinationId: string): Promise<DestinationWork>;
  /** Active destinations with pending deliveries, and when the earliest is due. */
  pendingDestinations(): Promise<{ destinationId: string; nextPendingAt: number }[]>;
  /**
   * When the longest-waiting pending delivery of an active destination came due, if one is
   * due by `now`; else null. The backlog-age signal (`sluice_oldest_pending_age_seconds`):
   * read at every scrape, so one index probe per destination, never a scan of the backlog.
   */
  oldestDueAt(now: number): Promise<number | null>;
  /**
   * Returns `queued`/`delivering` deliveries claimed before `claimedBefore` to `pending`
   * (a crash left them), except `keep`. Returns how many per destination.
   */
  requeue(claimedBefore: number, keep: ReadonlySet<string>, now: number): Promise<Map<string, number>>;
  /**
   * Returns claimed deliveries whose requests never started to `pending`, due as before (so
   * they keep their place): the limit was lowered after their tick published them, and the
   * window has no room for them under the new one (docs/adr/0012). A delivery no longer
   * `queued` is left as it is. Returns how many moved.
   */
  releaseClaims(deliveryIds: readonly string[], now: number): Promise<number>;
  /**
   * Deliveries `queued`/`delivering` claimed before `claimedBefore`, with the attempts made
   * before the claimed one: the candidates of a `requeue`, so the distributed sweeper asks the
   * delivery queue about these few jobs only (never lists the whole queue). Bounded by the
   * delivery queue's bound (DESIGN I3).
   */
  staleClaims(claimedBefore: number): Promise<StaleClaim[]>;
  /**
   * Cancels deliveries left `pending` on a deleted destination: an event accepted while its
   * destination was being deleted (the API's check and the delete raced) would otherwise
   * wait forever. Returns how many.
   */
  cancelOrphans(now: number): Promise<number>;
  /** Attempts started since `since`, oldest first: the send windows after a restart. */
  recentAttempts(since: number): Promise<{ destinationId: string; startedAt: number; finishedAt: number }[]>;

  countsFor(destinationId: string, since: number, now: number): Promise<DestinationCounts>;
  /** `countsFor` of many destinations at once (the dashboard's table); every id has an entry. */
  countsForMany(destinationIds: string[], since: number): Promise<Map<string, DestinationCounts>>;
  /** Start times of attempts in [from, to), sorted. */
  attemptTimes(destinationId: string, from: number, to: number): Promise<number[]>;

  // ---- backlog alerts (ADR 0009, alerter.ts)
  /**
   * Every destination not deleted, of any tenant but `exceptTenantId`, that has pending
   * deliveries: how many (counted up to `cap` only) and the earliest `nextAttemptAt`. Per
   * destination at most `cap` entries of the pending index and one probe: never a count of
   * the whole backlog.
   */
  backlogSamples(cap: number, exceptTenantId: string): Promise<BacklogSample[]>;
  /** The firing alerts, of one tenant or of all, by destination then kind. */
  listAlerts(tenantId?: string): Promise<FiringAlert[]>;
  /**
   * Raises the alert unless one of its destination and kind is firing: atomic, so of many
   * replicas raising at once exactly one does (true). With `notice`, the one that raises
   * accepts that event in the same transaction: the alert and its webhook go together.
   */
  raiseAlert(alert: FiringAlert, notice: AlertNotice | null, now: number): Promise<boolean>;
  /** Resolves the alert if it is still the one raised at `alert.raisedAt` (true); as atomic. */
  resolveAlert(alert: FiringAlert, notice: AlertNotice | null, now: number): Promise<boolean>;
  /**
   * Creates the tenant if missing (no API key can match it), and creates the destination
   * with its id or brings it back to these settings: active, and undeleted if deleted.
   */
  ensureSystemDestination(tenant: Tenant, destination: NewDestination, now: number): Promise<Destination>;

  ping(): Promise<void>;
  close(): Promise<void>;
}
