/**
 * The system of record, as the engine and the API use it. The single box implements it on
 * SQLite (`@sluice/store-sqlite`); distributed mode on Postgres. Both pass one conformance
 * suite. Times are milliseconds since the epoch.
 *
 * A method fails with its driver's error when the database cannot answer (down,
 * unreachable, its disk full, locked past the timeout) or with a `StoreUnavailableError`;
 * `isUnavailable` (unavailable.ts) tells such an outage from a bug, and the API answers it
 * `503 unavailable`.
 *
 * Glossary:
 * - due: a `pending` delivery whose `nextAttemptAt` has come;
 * - claim: move due deliveries to `queued` for one tick, oldest first;
 * - complete: record an attempt and move its delivery on (docs/design.md, flow 3);
 * - requeue: return `queued`/`delivering` deliveries left by a crash to `pending`.
 */

import type { BacklogSample, ClaimOrder, FiringAlert, HealthPolicy, HealthState } from '@sluice/core';
import type { AlertNotice } from './alerts.ts';
import type {
  AcceptOptions,
  AcceptResult,
  Attempt,
  Delivery,
  NewEvent,
  RetentionResult,
  RetryResult,
  StoredEvent,
} from './delivery.ts';
import type {
  Destination,
  DestinationPatch,
  NewDestination,
  NewTenant,
  Tenant,
  TenantPatch,
} from './destination.ts';
import type { EventType, EventTypeFields, EventTypePageRequest } from './event-types.ts';
import type { HealthChange, HealthTransition, ProbeClaim } from './health.ts';
import type { CompletionChanges, OperationalNotice } from './operational.ts';
import type { DeliveryFilter, Page, PageRequest } from './page.ts';
import type { NewPortalLink, PortalLink, PortalLinkMatch } from './portal-links.ts';
import type { RateLimitChange } from './rate-limit-changes.ts';
import type {
  EventFilter,
  KeyDeletion,
  KeyMatch,
  LoggedEvent,
  NewTenantKey,
  TenantKey,
} from './tenant-keys.ts';
import type { Claim, CompletedAttempt, DestinationCounts, DestinationWork, StaleClaim } from './work.ts';

export interface Store {
  /**
   * Creates the tenant with its first key (`key`: its id and prefix; by default `firstKeyId`
   * and no prefix).
   */
  createTenant(tenant: NewTenant, apiKeyHash: string, key?: Omit<NewTenantKey, 'hash'>): Promise<void>;
  /** Deleted tenants are not found (nor listed, nor patched). */
  getTenant(id: string): Promise<Tenant | undefined>;
  /** The tenant as patched (a quota field set to null: none of its own), or undefined when missing. */
  updateTenant(id: string, patch: TenantPatch): Promise<Tenant | undefined>;
  listTenants(page: PageRequest): Promise<Page<Tenant>>;
  /**
   * The tenant's events not yet finished (an event with a delivery `pending`, `queued` or
   * `delivering`), counted up to `cap` only: the pending-events quota needs no more, and
   * the count reads at most `cap` events' entries of an index, never the whole backlog.
   */
  pendingEvents(tenantId: string, cap: number): Promise<number>;

  // ---- tenants' lifecycle, keys and the event log (tenant-keys.ts)
  /** The key with this hash and its tenant, unless the key or the tenant was deleted. */
  keyByHash(hash: string): Promise<KeyMatch | undefined>;
  /** Adds a key to the tenant; undefined when the tenant is missing or deleted. */
  addTenantKey(tenantId: string, key: NewTenantKey, now: number): Promise<TenantKey | undefined>;
  /** The tenant's keys, oldest first (none for a missing tenant). */
  listTenantKeys(tenantId: string): Promise<TenantKey[]>;
  /** Deletes the key unless it is the tenant's last (atomic: two deletes cannot leave none). */
  deleteTenantKey(tenantId: string, keyId: string): Promise<KeyDeletion>;
  /** Records a key's use (`lastUsedAt`); nothing when the key is gone. */
  touchTenantKey(keyId: string, now: number): Promise<void>;
  /**
   * Deletes the tenant in one transaction: marks it deleted, deletes its keys and portal links, and deletes its
   * destinations as `deleteDestination` does (undelivered deliveries cancelled). Returns the
   * destinations deleted, or undefined when the tenant is missing or already deleted.
   */
  deleteTenant(id: string, now: number): Promise<string[] | undefined>;
  /** The tenant's events, newest first, without their payloads (`LoggedEvent`). */
  listEvents(filter: EventFilter, page: PageRequest): Promise<Page<LoggedEvent>>;

  createDestination(destination: NewDestination, now: number): Promise<Destination>;
  /** Deleted destinations are not found. */
  getDestination(id: string): Promise<Destination | undefined>;
  /**
   * With `notices` (operational.ts: a secret's rotation), accepts them in the same transaction
   * when the destination was updated.
   */
  updateDestination(
    id: string,
    patch: DestinationPatch,
    now: number,
    notices?: OperationalNotice[],
  ): Promise<Destination | undefined>;
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
  acceptEvents(
    tenantId: string,
    events: NewEvent[],
    now: number,
    options?: AcceptOptions,
  ): Promise<AcceptResult[]>;

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
   * deliveries left, and endpoint-health transitions and rate-limit changes older than
   * `before` (counted together as `transitions`). Dead deliveries
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
   * theirs. A tick's claim is exclusive per destination (docs/design.md, flow 2: the tick lease).
   */
  claimDue(destinationId: string, max: number, now: number, order?: ClaimOrder): Promise<Claim>;
  /**
   * Records the attempts, moves their deliveries on, and folds their results into each
   * destination's health (`nextHealth`), atomically: an attempt held by a degraded or
   * suspended destination (`isHeld`) goes back to pending instead of dead. Returns the
   * destinations whose health moved (a transition, or a failed probe). The batch's
   * operational events (`completionNotices`: a breaker opened or closed, a 410, a delivery
   * dead) are accepted in the same transaction; `notified` lists the destinations they
   * went to.
   */
  completeAttempts(
    completed: CompletedAttempt[],
    now: number,
    policy?: HealthPolicy,
  ): Promise<CompletionChanges>;
  /**
   * A suspended destination's probe: when its `nextProbeAt` has come, claims its one oldest
   * pending delivery (due or not) and moves `nextProbeAt` to `holdUntil` (the probe's
   * completion sets the real next one), so no two probes overlap. A delivery claimed for the
   * first time takes its destination's next sequence, as in `claimDue`.
   */
  claimProbe(destinationId: string, now: number, holdUntil: number): Promise<ProbeClaim>;
  /**
   * Back to healthy (an operator's resume, a new URL); the change, or null when it was
   * healthy. A suspended one's `sluice.destination.recovered` (operational.ts) is accepted in
   * the same transaction.
   */
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
   * (a crash left them), except `keep`. Returns how many per destination. `attempted`: their
   * requests may have been sent (the single box's restart), so each counts as an attempt made
   * (`attempts` + 1) and a repeat carries `webhook-attempt` one higher than the request it
   * repeats.
   */
  requeue(
    claimedBefore: number,
    keep: ReadonlySet<string>,
    now: number,
    attempted?: boolean,
  ): Promise<Map<string, number>>;
  /**
   * Returns claimed deliveries whose requests never started to `pending`, due as before (so
   * they keep their place): the limit was lowered after their tick published them, and the
   * window has no room for them under the new one (docs/adr/0012). A delivery no longer
   * `queued` is left as it is. Returns how many moved. `attempted`: their requests may have
   * been sent before (a job run again after its worker died), so each counts as an attempt.
   */
  releaseClaims(deliveryIds: readonly string[], now: number, attempted?: boolean): Promise<number>;
  /**
   * Deliveries `queued`/`delivering` claimed before `claimedBefore`, with the attempts made
   * before the claimed one: the candidates of a `requeue`, so the distributed sweeper asks the
   * delivery queue about these few jobs only (never lists the whole queue). Bounded by the
   * delivery queue's bound (docs/design.md I3).
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
  /**
   * The changes of a destination's rate limit made in [from, to), oldest first
   * (`updateDestination` records each one, with the limit before and after).
   */
  rateLimitChanges(destinationId: string, from: number, to: number): Promise<RateLimitChange[]>;

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
   * accepts that event in the same transaction: the alert and its webhook go together; and
   * with `operational`, the tenant's `sluice.backlog.…` event (`emitOperational`) too.
   */
  raiseAlert(
    alert: FiringAlert,
    notice: AlertNotice | null,
    now: number,
    operational?: OperationalNotice,
  ): Promise<boolean>;
  /** Resolves the alert if it is still the one raised at `alert.raisedAt` (true); as atomic. */
  resolveAlert(
    alert: FiringAlert,
    notice: AlertNotice | null,
    now: number,
    operational?: OperationalNotice,
  ): Promise<boolean>;
  /**
   * Creates the tenant if missing (no API key can match it), and creates the destination
   * with its id or brings it back to these settings: active, and undeleted if deleted.
   */
  ensureSystemDestination(tenant: NewTenant, destination: NewDestination, now: number): Promise<Destination>;

  // ---- operational events (operational.ts)
  /**
   * Accepts each notice as an event of its tenant, to its subscribers, in one transaction;
   * a notice whose key was accepted before creates nothing. Returns the destinations given
   * deliveries (the caller wakes them).
   */
  emitOperational(notices: OperationalNotice[], now: number): Promise<string[]>;

  // ---- the event-type catalog (event-types.ts; Sluice's own `sluice.…` types are not stored)
  /** Creates the type, or returns undefined when its name is taken. */
  createEventType(name: string, fields: EventTypeFields, now: number): Promise<EventType | undefined>;
  getEventType(name: string): Promise<EventType | undefined>;
  /** Sets the type's fields (whole) and `updatedAt`; undefined when missing. */
  updateEventType(name: string, fields: EventTypeFields, now: number): Promise<EventType | undefined>;
  deleteEventType(name: string): Promise<boolean>;
  /** The catalog by name, ascending. */
  listEventTypes(page: EventTypePageRequest): Promise<Page<EventType>>;

  // ---- portal links (portal-links.ts, docs/api.md "Portal links")
  /**
   * Creates the link, and deletes the tenant's links expired more than a day before its
   * `createdAt`; undefined (nothing created) when the tenant is missing or deleted.
   */
  createPortalLink(link: NewPortalLink): Promise<PortalLink | undefined>;
  /** The link whose token has this hash and its tenant, unless the link or the tenant was deleted (expired ones too). */
  portalLinkByHash(hash: string): Promise<PortalLinkMatch | undefined>;
  getPortalLink(id: string): Promise<PortalLink | undefined>;
  /** Links newest first, of one tenant or of all. */
  listPortalLinks(tenantId: string | undefined, page: PageRequest): Promise<Page<PortalLink>>;
  /** Deletes (revokes) the link; false when it was not there. */
  deletePortalLink(id: string): Promise<boolean>;

  ping(): Promise<void>;
  close(): Promise<void>;
}
