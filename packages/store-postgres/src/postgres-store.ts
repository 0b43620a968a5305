/**
 * The distributed shape's Store on Postgres, the system of record (docs/design.md). It behaves as the
 * SQLite store does, and the same conformance suite checks it; what differs is that many
 * processes use it at once, so what SQLite got from running one statement at a time comes
 * here from the database:
 *
 * - a claim takes rows with `FOR UPDATE SKIP LOCKED`, so limiter replicas never claim one
 *   delivery twice (lifecycle.ts);
 * - concurrent events with one idempotency key meet on a unique index (accept.ts);
 * - writes that go together are one statement or one transaction, in a few round trips
 *   whatever the batch size.
 *
 * Open it with `PostgresStore.open(url, { schema })`, which creates the schema and migrates.
 */

import type {
  BacklogSample,
  ClaimOrder,
  FiringAlert,
  HealthPolicy,
  HealthState,
  Keyring,
} from '@sluice/core';
import type {
  AcceptResult,
  AlertNotice,
  Attempt,
  Claim,
  CompletedAttempt,
  CompletionChanges,
  Delivery,
  DeliveryFilter,
  Destination,
  DestinationCounts,
  DestinationPatch,
  DestinationWork,
  EventFilter,
  EventType,
  EventTypeFields,
  EventTypePageRequest,
  HealthChange,
  HealthTransition,
  KeyDeletion,
  KeyMatch,
  LoggedEvent,
  NewDestination,
  NewEvent,
  NewPortalLink,
  NewTenant,
  NewTenantKey,
  OperationalNotice,
  Page,
  PageRequest,
  PerTurn,
  PortalLink,
  PortalLinkMatch,
  ProbeClaim,
  RateLimitChange,
  RetentionResult,
  RetryResult,
  StaleClaim,
  Store,
  StoredEvent,
  Tenant,
  TenantKey,
  TenantPatch,
} from '@sluice/store';
import {
  DiskFull,
  insertDestinationSql,
  insertRateLimitChangeSql,
  insertValues,
  newDestinationRecord,
  patchedDestination,
  rateLimitChangeFromRow,
  rateLimitChangesSql,
  rateLimitChangeValues,
  sameRateLimit,
  updateDestinationSql,
  updateValues,
} from '@sluice/store';
import { AcceptBatcher } from './accept.ts';
import * as alerts from './alerts.ts';
import { ClaimBatcher } from './claim.ts';
import * as complete from './complete.ts';
import { countsForMany } from './counts.ts';
import { Db, type DbOptions } from './db.ts';
import * as eventTypes from './event-types.ts';
import * as health from './health.ts';
import * as lifecycle from './lifecycle.ts';
import * as lists from './lists.ts';
import { migrate } from './migrate.ts';
import { emitNotices } from './operational.ts';
import * as portalLinks from './portal-links.ts';
import { DESTINATION_BY_ID, DESTINATION_BY_ID_FOR_UPDATE, destinationFromRow, live, mark } from './rows.ts';
import { sealSecrets } from './seal.ts';
import * as tenants from './tenants.ts';
import { probeWrite } from './write-probe.ts';

export interface PostgresStoreOptions extends DbOptions {
  /** Seals the signing secrets in the rows and opens them on read (`SLUICE_ENCRYPTION_KEY`). */
  keyring: Keyring;
}

/**
 * Planning a statement opens its table and every index of it: one that names each hot
 * table, matching nothing, loads what the first accept, claim and completion would.
 */
const WARM_UP = `SELECT
  (SELECT count(*) FROM destinations WHERE id = '') + (SELECT count(*) FROM events WHERE id = '')
  + (SELECT count(*) FROM deliveries WHERE id = '') + (SELECT count(*) FROM attempts WHERE id = '')
  + (SELECT count(*) FROM tenants WHERE id = '') AS n`;

const INSERT_DESTINATION = insertDestinationSql(mark);
const UPDATE_DESTINATION = updateDestinationSql(mark);
const INSERT_RATE_LIMIT_CHANGE = insertRateLimitChangeSql(mark);
const RATE_LIMIT_CHANGES = rateLimitChangesSql(mark);

export class PostgresStore implements Store {
  readonly db: Db;
  private readonly keyring: Keyring;
  /** The ticks of one turn claim in one statement (claim.ts). */
  private readonly claims: ClaimBatcher;
  /** The API requests of one turn accept in one statement per tenant (accept.ts). */
  private readonly accepts: AcceptBatcher;
  /** Every API request's key lookup; those of one turn in one statement (tenants.ts). */
  private readonly keys: PerTurn<string, KeyMatch | null>;
  /** A statement failing for a full disk marks it; `ping` probes until a write succeeds. */
  private readonly diskFull = new DiskFull(() => probeWrite(this.db));

  /** A store on an already migrated database; see `open`. */
  constructor(url: string, options: PostgresStoreOptions) {
    this.db = new Db(url, options, (err) => this.diskFull.observe(err));
    this.keyring = options.keyring;
    this.claims = new ClaimBatcher(this.db.generic);
    this.accepts = new AcceptBatcher(this.db);
    this.keys = tenants.keyLookups(this.db);
  }

  /**
   * Creates the schema if missing, applies the migrations (under a lock), seals the signing
   * secrets not sealed with the keyring's first key (seal.ts), opens the pool's
   * kept connections (`poolMin`) and loads the hot tables' catalog entries on each, then
   * opens the store.
   */
  static async open(url: string, options: PostgresStoreOptions): Promise<PostgresStore> {
    const store = new PostgresStore(url, options);
    try {
      await migrate(store.db, { schema: options.schema });
      const seal = await sealSecrets(store.db, options.keyring, options.schema);
      if (!seal.scrubbed)
        process.emitWarning(
          'a transaction older than the sealing of the plain signing secrets outlived the wait: ' +
            'run VACUUM FULL destinations again once it has ended (docs/operations.md "The encryption key")',
          { code: 'SLUICE_SCRUB_INCOMPLETE' },
        );
      await store.db.warm(WARM_UP);
      return store;
    } catch (err) {
      await store.close();
      throw err;
    }
  }

  async createTenant(tenant: NewTenant, apiKeyHash: string, key?: Omit<NewTenantKey, 'hash'>): Promise<void> {
    await tenants.createTenant(this.db, tenant, apiKeyHash, key);
  }

  async getTenant(id: string): Promise<Tenant | undefined> {
    return tenants.getTenant(this.db, id);
  }

  async updateTenant(id: string, patch: TenantPatch): Promise<Tenant | undefined> {
    return tenants.updateTenant(this.db, id, patch);
  }

  async pendingEvents(tenantId: string, cap: number): Promise<number> {
    return tenants.pendingEvents(this.db, tenantId, cap);
  }

  async listTenants(page: PageRequest): Promise<Page<Tenant>> {
    return lists.listTenants(this.db, page);
  }

  // ---- tenants' lifecycle, keys and the event log (tenants.ts)
  async keyByHash(hash: string): Promise<KeyMatch | undefined> {
    return (await this.keys.load(hash)) ?? undefined;
  }

  async addTenantKey(tenantId: string, key: NewTenantKey, now: number): Promise<TenantKey | undefined> {
    return tenants.addTenantKey(this.db, tenantId, key, now);
  }

  async listTenantKeys(tenantId: string): Promise<TenantKey[]> {
    return tenants.listTenantKeys(this.db, tenantId);
  }

  async deleteTenantKey(tenantId: string, keyId: string): Promise<KeyDeletion> {
    return tenants.deleteTenantKey(this.db, tenantId, keyId);
  }

  async touchTenantKey(keyId: string, now: number): Promise<void> {
    await tenants.touchTenantKey(this.db, keyId, now);
  }

  async deleteTenant(id: string, now: number): Promise<string[] | undefined> {
    return tenants.deleteTenant(this.db, id, now);
  }

  async listEvents(filter: EventFilter, page: PageRequest): Promise<Page<LoggedEvent>> {
    return tenants.listEvents(this.db, filter, page);
  }

  async createDestination(input: NewDestination, now: number): Promise<Destination> {
    const destination = newDestinationRecord(input, now);
    await this.db.query(INSERT_DESTINATION, insertValues(destination, this.keyring));
    return destination;
  }

  async getDestination(id: string): Promise<Destination | undefined> {
    const r = live((await this.db.query(DESTINATION_BY_ID, [id]))[0]);
    return r && destinationFromRow(r, this.keyring);
  }

  async updateDestination(
    id: string,
    patch: DestinationPatch,
    now: number,
    notices: OperationalNotice[] = [],
  ): Promise<Destination | undefined> {
    return this.db.tx(async (q) => {
      // Locked from read to write, so two concurrent patches both apply.
      const r = live((await q.query(DESTINATION_BY_ID_FOR_UPDATE, [id]))[0]);
      if (r === undefined) return undefined;
      const before = destinationFromRow(r, this.keyring);
      const next = patchedDestination(before, patch, now);
      await q.query(UPDATE_DESTINATION, updateValues(next, this.keyring));
      if (notices.length > 0) await emitNotices(q, notices, now);
      if (!sameRateLimit(before.rateLimit, next.rateLimit))
        await q.query(
          INSERT_RATE_LIMIT_CHANGE,
          rateLimitChangeValues(id, { at: now, from: before.rateLimit, to: next.rateLimit }),
        );
      return next;
    });
  }

  async deleteDestination(id: string, now: number): Promise<boolean> {
    // One statement: the soft delete, and the cancelling of its undelivered deliveries.
    return (await this.db.query(tenants.DELETE_DESTINATION, [id, now])).length === 1;
  }

  async cancelOrphans(now: number): Promise<number> {
    return lifecycle.cancelOrphans(this.db, now);
  }

  async listDestinations(tenantId: string): Promise<Destination[]> {
    const rows = await this.db.query(
      'SELECT * FROM destinations WHERE tenant_id = $1 AND deleted_at IS NULL ORDER BY id',
      [tenantId],
    );
    return rows.map((r) => destinationFromRow(r, this.keyring));
  }

  async pageDestinations(tenantId: string | undefined, page: PageRequest): Promise<Page<Destination>> {
    return lists.pageDestinations(this.db, this.keyring, tenantId, page);
  }

  async acceptEvents(tenantId: string, events: NewEvent[], now: number): Promise<AcceptResult[]> {
    return this.accepts.accept(tenantId, events, now);
  }

  async getEvent(id: string): Promise<{ event: StoredEvent; deliveries: Delivery[] } | undefined> {
    return lists.getEvent(this.db, id);
  }

  async getDelivery(id: string): Promise<{ delivery: Delivery; attempts: Attempt[] } | undefined> {
    return lists.getDelivery(this.db, id);
  }

  async listDeliveries(filter: DeliveryFilter, page: PageRequest): Promise<Page<Delivery>> {
    return lists.listDeliveries(this.db, filter, page);
  }

  async replayDead(destinationId: string, since: number | null, now: number): Promise<number> {
    return lists.replayDead(this.db, destinationId, since, now);
  }

  async retryDelivery(id: string, now: number): Promise<RetryResult> {
    return lists.retryDelivery(this.db, id, now);
  }

  async deleteExpired(before: number, batch: number): Promise<RetentionResult> {
    return lists.deleteExpired(this.db, before, batch);
  }

  async claimDue(destinationId: string, max: number, now: number, order?: ClaimOrder): Promise<Claim> {
    return this.claims.claim({ destinationId, max, now, order: order ?? 'due' });
  }

  async completeAttempts(
    completed: CompletedAttempt[],
    now: number,
    policy?: HealthPolicy,
  ): Promise<CompletionChanges> {
    return complete.completeAttempts(this.db, completed, now, policy);
  }

  async claimProbe(destinationId: string, now: number, holdUntil: number): Promise<ProbeClaim> {
    return health.claimProbe(this.db, destinationId, now, holdUntil);
  }

  async resetHealth(destinationId: string, now: number): Promise<HealthChange | null> {
    return health.resetHealth(this.db, destinationId, now);
  }

  async healthTransitions(destinationId: string, limit: number): Promise<HealthTransition[]> {
    return health.healthTransitions(this.db, destinationId, limit);
  }

  async healthCounts(): Promise<Record<HealthState, number>> {
    return health.healthCounts(this.db);
  }

  async destinationWork(destinationId: string): Promise<DestinationWork> {
    return lifecycle.destinationWork(this.db, destinationId);
  }

  async pendingDestinations(): Promise<{ destinationId: string; nextPendingAt: number }[]> {
    return lifecycle.pendingDestinations(this.db);
  }

  async oldestDueAt(now: number): Promise<number | null> {
    return lifecycle.oldestDueAt(this.db, now);
  }

  async requeue(
    claimedBefore: number,
    keep: ReadonlySet<string>,
    now: number,
    attempted = false,
  ): Promise<Map<string, number>> {
    return lifecycle.requeue(this.db, claimedBefore, keep, now, attempted);
  }

  async releaseClaims(deliveryIds: readonly string[], now: number, attempted = false): Promise<number> {
    return lifecycle.releaseClaims(this.db, deliveryIds, now, attempted);
  }

  async staleClaims(claimedBefore: number): Promise<StaleClaim[]> {
    return lifecycle.staleClaims(this.db, claimedBefore);
  }

  async recentAttempts(
    since: number,
  ): Promise<{ destinationId: string; startedAt: number; finishedAt: number }[]> {
    return lifecycle.recentAttempts(this.db, since);
  }

  async countsFor(destinationId: string, since: number, _now: number): Promise<DestinationCounts> {
    return lifecycle.countsFor(this.db, destinationId, since);
  }

  async countsForMany(destinationIds: string[], since: number): Promise<Map<string, DestinationCounts>> {
    return countsForMany(this.db, destinationIds, since);
  }

  async attemptTimes(destinationId: string, from: number, to: number): Promise<number[]> {
    return lifecycle.attemptTimes(this.db, destinationId, from, to);
  }

  async rateLimitChanges(destinationId: string, from: number, to: number): Promise<RateLimitChange[]> {
    const rows = await this.db.query(RATE_LIMIT_CHANGES, [destinationId, from, to]);
    return rows.map(rateLimitChangeFromRow);
  }

  // ---- backlog alerts (ADR 0009): alerts.ts

  async backlogSamples(cap: number, exceptTenantId: string): Promise<BacklogSample[]> {
    return alerts.backlogSamples(this.db, cap, exceptTenantId);
  }

  async listAlerts(tenantId?: string): Promise<FiringAlert[]> {
    return alerts.listAlerts(this.db, tenantId);
  }

  async raiseAlert(
    alert: FiringAlert,
    notice: AlertNotice | null,
    now: number,
    operational?: OperationalNotice,
  ): Promise<boolean> {
    return alerts.changeAlert(this.db, 'raise', alert, notice, now, operational);
  }

  async resolveAlert(
    alert: FiringAlert,
    notice: AlertNotice | null,
    now: number,
    operational?: OperationalNotice,
  ): Promise<boolean> {
    return alerts.changeAlert(this.db, 'resolve', alert, notice, now, operational);
  }

  async emitOperational(notices: OperationalNotice[], now: number): Promise<string[]> {
    if (notices.length === 0) return [];
    return this.db.tx((q) => emitNotices(q, notices, now));
  }

  async ensureSystemDestination(
    tenant: NewTenant,
    destination: NewDestination,
    now: number,
  ): Promise<Destination> {
    return alerts.ensureSystemDestination(this.db, this.keyring, tenant, destination, now);
  }

  // ---- the event-type catalog: event-types.ts

  async createEventType(name: string, fields: EventTypeFields, now: number): Promise<EventType | undefined> {
    return eventTypes.createEventType(this.db, name, fields, now);
  }

  async getEventType(name: string): Promise<EventType | undefined> {
    return eventTypes.getEventType(this.db, name);
  }

  async updateEventType(name: string, fields: EventTypeFields, now: number): Promise<EventType | undefined> {
    return eventTypes.updateEventType(this.db, name, fields, now);
  }

  async deleteEventType(name: string): Promise<boolean> {
    return eventTypes.deleteEventType(this.db, name);
  }

  async listEventTypes(page: EventTypePageRequest): Promise<Page<EventType>> {
    return eventTypes.listEventTypes(this.db, page);
  }

  // ---- portal links: portal-links.ts

  async createPortalLink(link: NewPortalLink): Promise<PortalLink | undefined> {
    return portalLinks.createPortalLink(this.db, link);
  }

  async portalLinkByHash(hash: string): Promise<PortalLinkMatch | undefined> {
    return portalLinks.portalLinkByHash(this.db, hash);
  }

  async getPortalLink(id: string): Promise<PortalLink | undefined> {
    return portalLinks.getPortalLink(this.db, id);
  }

  async listPortalLinks(tenantId: string | undefined, page: PageRequest): Promise<Page<PortalLink>> {
    return portalLinks.listPortalLinks(this.db, tenantId, page);
  }

  async deletePortalLink(id: string): Promise<boolean> {
    return portalLinks.deletePortalLink(this.db, id);
  }

  /** Answers, and can write: while a full disk refused a write, a probe write decides (DiskFull). */
  async ping(): Promise<void> {
    await this.db.query('SELECT 1');
    await this.diskFull.check();
  }

  async close(): Promise<void> {
    await this.db.end();
  }
}
