/**
 * The single-box Store on `node:sqlite` (docs/design.md: one process, one file).
 *
 * node:sqlite is synchronous: every method runs to completion without yielding, so each is
 * atomic with respect to the rest of the process. Writes that must go together run in one
 * `BEGIN IMMEDIATE` transaction; accepting events commits before the method returns, which
 * is before the API answers 202. WAL lets readers (the API) go on during a write.
 */

import { DatabaseSync, type StatementSync } from 'node:sqlite';
import type {
  BacklogSample,
  ClaimOrder,
  FiringAlert,
  HealthPolicy,
  HealthState,
  Keyring,
} from '@sluice/core';
import type {
  AcceptOptions,
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
import { DiskFull } from '@sluice/store';
import { acceptOne } from './accept.ts';
import { Accepts } from './accepts.ts';
import * as alerts from './alerts.ts';
import { Checkpointer } from './checkpointer.ts';
import * as claim from './claim.ts';
import { countsForMany } from './counts.ts';
import * as destinations from './destinations.ts';
import * as eventTypes from './event-types.ts';
import * as health from './health.ts';
import * as lifecycle from './lifecycle.ts';
import * as lists from './lists.ts';
import { migrate } from './migrate.ts';
import { emitNotices } from './operational.ts';
import * as portalLinks from './portal-links.ts';
import { createPrivately } from './private-file.ts';
import { sealSecrets } from './seal.ts';
import { recoverStagedBatches } from './staged-batches.ts';
import * as tenants from './tenants.ts';
import { TurnBatch } from './turn-batch.ts';
import { probeWrite } from './write-probe.ts';

export type Synchronous = 'full' | 'normal';

export interface SqliteStoreOptions {
  /**
   * Seals the destinations' signing secrets in the file and opens them on read
   * (`SLUICE_ENCRYPTION_KEY`); at open, every secret not sealed with its first key is (seal.ts).
   */
  keyring: Keyring;
  /**
   * `full`: what the API answered for (accepted events, tenants, destinations, replays)
   * survives power loss; `normal` (WAL): everything survives a crash of the process only.
   * Delivery progress (claims, attempts, outcomes) is written `normal` either way: losing
   * it to power loss means a repeat with the same `webhook-id`, which at-least-once allows
   * after a crash (docs/design.md I6), and it is most of the writes (docs/adr/0003).
   */
  synchronous?: Synchronous;
  /**
   * Checkpoint the WAL on a thread of its own this often (`checkpointer.ts`) instead of in
   * the main thread's commits; default: SQLite's automatic checkpoints. Not for `:memory:`.
   */
  checkpointIntervalMs?: number | undefined;
  /** With a checkpointer: WAL frames from which the WAL is made to start over (tests). */
  walRestartPages?: number | undefined;
}

type PendingClaim = { destinationId: string; max: number; now: number; order: ClaimOrder };

export class SqliteStore implements Store, lists.Sql, claim.ClaimSql, health.HealthSql {
  readonly db: DatabaseSync;
  readonly keyring: Keyring;
  private readonly cache = new Map<string, StatementSync>();
  private readonly full: boolean;
  private readonly accepts: Accepts;
  private readonly claims: TurnBatch<PendingClaim, Claim>;
  private readonly checkpointer: Checkpointer | undefined;
  /** A transaction failing for a full disk marks it; `ping` probes until a write succeeds. */
  private readonly diskFull = new DiskFull(async () => probeWrite(this));

  constructor(path: string, options: SqliteStoreOptions) {
    if (path !== ':memory:') createPrivately(path);
    this.db = new DatabaseSync(path, { timeout: 5_000 });
    this.db.exec('PRAGMA journal_mode = WAL');
    this.full = options.synchronous !== 'normal';
    this.db.exec(`PRAGMA synchronous = ${this.full ? 'FULL' : 'NORMAL'}`);
    this.db.exec('PRAGMA foreign_keys = ON');
    this.keyring = options.keyring;
    try {
      migrate(this.db);
      // A secret the keyring cannot open stops the start here, not a delivery later.
      sealSecrets(this.db, this.keyring);
      recoverStagedBatches(this);
    } catch (err) {
      this.db.close();
      throw err;
    }
    const intervalMs = options.checkpointIntervalMs;
    this.checkpointer =
      intervalMs === undefined || path === ':memory:'
        ? undefined
        : new Checkpointer(this.db, { path, intervalMs, restartPages: options.walRestartPages });
    this.accepts = new Accepts(this);
    this.claims = new TurnBatch({
      db: this.db,
      tx: (fn) => this.progressTx(fn),
      defer: process.nextTick,
      one: ({ destinationId, max, now, order }: PendingClaim) =>
        claim.claimDue(this, destinationId, max, now, order),
    });
  }

  sql(text: string): StatementSync {
    let stmt = this.cache.get(text);
    if (stmt === undefined) {
      stmt = this.db.prepare(text);
      this.cache.set(text, stmt);
    }
    return stmt;
  }

  /**
   * A transaction of delivery progress: committed without waiting for the disk (it is in
   * the WAL, so a crash of the process keeps it; power loss may not). The next `tx` is
   * durable again, and syncs this one's frames with its own.
   */
  progressTx<T>(fn: () => T): T {
    if (!this.full) return this.tx(fn);
    this.db.exec('PRAGMA synchronous = NORMAL');
    try {
      return this.tx(fn);
    } finally {
      this.db.exec('PRAGMA synchronous = FULL');
    }
  }

  tx<T>(fn: () => T): T {
    this.db.exec('BEGIN IMMEDIATE');
    try {
      const result = fn();
      this.db.exec('COMMIT');
      return result;
    } catch (err) {
      // On some errors (SQLITE_FULL, SQLITE_IOERR, SQLITE_BUSY in a COMMIT) SQLite has rolled
      // the transaction back itself: a ROLLBACK then would fail and hide the error to report.
      if (this.db.isTransaction) this.db.exec('ROLLBACK');
      this.diskFull.observe(err);
      throw err;
    }
  }

  async createTenant(tenant: NewTenant, apiKeyHash: string, key?: Omit<NewTenantKey, 'hash'>): Promise<void> {
    tenants.createTenant(this, tenant, apiKeyHash, key);
  }

  async getTenant(id: string): Promise<Tenant | undefined> {
    return tenants.getTenant(this, id);
  }

  async updateTenant(id: string, patch: TenantPatch): Promise<Tenant | undefined> {
    return tenants.updateTenant(this, id, patch);
  }

  async pendingEvents(tenantId: string, cap: number): Promise<number> {
    return tenants.pendingEvents(this, tenantId, cap);
  }

  async listTenants(page: PageRequest): Promise<Page<Tenant>> {
    return lists.listTenants(this, page);
  }

  // ---- tenants' lifecycle, keys and the event log (tenants.ts)
  async keyByHash(hash: string): Promise<KeyMatch | undefined> {
    return tenants.keyByHash(this, hash);
  }

  async addTenantKey(tenantId: string, key: NewTenantKey, now: number): Promise<TenantKey | undefined> {
    return tenants.addTenantKey(this, tenantId, key, now);
  }

  async listTenantKeys(tenantId: string): Promise<TenantKey[]> {
    return tenants.listTenantKeys(this, tenantId);
  }

  async deleteTenantKey(tenantId: string, keyId: string): Promise<KeyDeletion> {
    return tenants.deleteTenantKey(this, tenantId, keyId);
  }

  async touchTenantKey(keyId: string, now: number): Promise<void> {
    tenants.touchTenantKey(this, keyId, now);
  }

  async deleteTenant(id: string, now: number): Promise<string[] | undefined> {
    return tenants.deleteTenant(this, id, now);
  }

  async listEvents(filter: EventFilter, page: PageRequest): Promise<Page<LoggedEvent>> {
    return tenants.listEvents(this, filter, page);
  }

  async createDestination(input: NewDestination, now: number): Promise<Destination> {
    return destinations.createDestination(this, input, now);
  }

  async getDestination(id: string): Promise<Destination | undefined> {
    return destinations.getDestination(this, id);
  }

  async updateDestination(
    id: string,
    patch: DestinationPatch,
    now: number,
    notices?: OperationalNotice[],
  ): Promise<Destination | undefined> {
    return destinations.updateDestination(this, id, patch, now, notices);
  }

  async deleteDestination(id: string, now: number): Promise<boolean> {
    return destinations.deleteDestination(this, id, now);
  }

  async cancelOrphans(now: number): Promise<number> {
    return destinations.cancelOrphans(this, now);
  }

  async listDestinations(tenantId: string): Promise<Destination[]> {
    return destinations.listDestinations(this, tenantId);
  }

  async pageDestinations(tenantId: string | undefined, page: PageRequest): Promise<Page<Destination>> {
    return lists.pageDestinations(this, tenantId, page);
  }

  /** One durable commit a turn, or a batch in slices: `accepts.ts`. */
  acceptEvents(tenantId: string, events: NewEvent[], now: number, options?: AcceptOptions) {
    return this.accepts.accept(tenantId, events, now, options);
  }

  async getEvent(id: string): Promise<{ event: StoredEvent; deliveries: Delivery[] } | undefined> {
    return lists.getEvent(this, id);
  }

  async getDelivery(id: string): Promise<{ delivery: Delivery; attempts: Attempt[] } | undefined> {
    return lists.getDelivery(this, id);
  }

  async listDeliveries(filter: DeliveryFilter, page: PageRequest): Promise<Page<Delivery>> {
    return lists.listDeliveries(this, filter, page);
  }

  async replayDead(destinationId: string, since: number | null, now: number): Promise<number> {
    return lists.replayDead(this, destinationId, since, now);
  }

  async retryDelivery(id: string, now: number): Promise<RetryResult> {
    return lists.retryDelivery(this, id, now);
  }

  async deleteExpired(before: number, batch: number): Promise<RetentionResult> {
    return lists.deleteExpired(this, before, batch);
  }

  /** The claims of the ticks started together (one timer) share one commit: `turn-batch.ts`. */
  claimDue(destinationId: string, max: number, now: number, order: ClaimOrder = 'due'): Promise<Claim> {
    return this.claims.run({ destinationId, max, now, order });
  }

  async completeAttempts(
    completed: CompletedAttempt[],
    now: number,
    policy?: HealthPolicy,
  ): Promise<CompletionChanges> {
    return health.completeAttempts(this, completed, now, policy);
  }

  async claimProbe(destinationId: string, now: number, holdUntil: number): Promise<ProbeClaim> {
    return health.claimProbe(this, destinationId, now, holdUntil);
  }

  async resetHealth(destinationId: string, now: number): Promise<HealthChange | null> {
    return health.resetHealth(this, destinationId, now);
  }

  async healthTransitions(destinationId: string, limit: number): Promise<HealthTransition[]> {
    return health.healthTransitions(this, destinationId, limit);
  }

  async healthCounts(): Promise<Record<HealthState, number>> {
    return health.healthCounts(this);
  }

  async destinationWork(destinationId: string): Promise<DestinationWork> {
    return lifecycle.destinationWork(this, destinationId);
  }

  async pendingDestinations(): Promise<{ destinationId: string; nextPendingAt: number }[]> {
    return lifecycle.pendingDestinations(this);
  }

  async oldestDueAt(now: number): Promise<number | null> {
    return lifecycle.oldestDueAt(this, now);
  }

  async requeue(
    claimedBefore: number,
    keep: ReadonlySet<string>,
    now: number,
    attempted = false,
  ): Promise<Map<string, number>> {
    return lifecycle.requeue(this, claimedBefore, keep, now, attempted);
  }

  async releaseClaims(deliveryIds: readonly string[], now: number, attempted = false): Promise<number> {
    return lifecycle.releaseClaims(this, deliveryIds, now, attempted);
  }

  async staleClaims(claimedBefore: number): Promise<StaleClaim[]> {
    return lifecycle.staleClaims(this, claimedBefore);
  }

  async recentAttempts(
    since: number,
  ): Promise<{ destinationId: string; startedAt: number; finishedAt: number }[]> {
    return lifecycle.recentAttempts(this, since);
  }

  async countsFor(destinationId: string, since: number, _now: number): Promise<DestinationCounts> {
    return lifecycle.countsFor(this, destinationId, since);
  }

  async countsForMany(destinationIds: string[], since: number): Promise<Map<string, DestinationCounts>> {
    return countsForMany(this, destinationIds, since);
  }

  async attemptTimes(destinationId: string, from: number, to: number): Promise<number[]> {
    return lifecycle.attemptTimes(this, destinationId, from, to);
  }

  async rateLimitChanges(destinationId: string, from: number, to: number): Promise<RateLimitChange[]> {
    return destinations.rateLimitChanges(this, destinationId, from, to);
  }

  // ---- backlog alerts (ADR 0009): alerts.ts

  async backlogSamples(cap: number, exceptTenantId: string): Promise<BacklogSample[]> {
    return alerts.backlogSamples(this, cap, exceptTenantId);
  }

  async listAlerts(tenantId?: string): Promise<FiringAlert[]> {
    return alerts.listAlerts(this, tenantId);
  }

  async raiseAlert(
    alert: FiringAlert,
    notice: AlertNotice | null,
    now: number,
    operational?: OperationalNotice,
  ): Promise<boolean> {
    return alerts.changeAlert(this, this.acceptAlert, 'raise', alert, notice, now, operational);
  }

  async resolveAlert(
    alert: FiringAlert,
    notice: AlertNotice | null,
    now: number,
    operational?: OperationalNotice,
  ): Promise<boolean> {
    return alerts.changeAlert(this, this.acceptAlert, 'resolve', alert, notice, now, operational);
  }

  async emitOperational(notices: OperationalNotice[], now: number): Promise<string[]> {
    if (notices.length === 0) return [];
    return this.tx(() => emitNotices(this, notices, now));
  }

  private readonly acceptAlert = (tenantId: string, event: NewEvent, now: number): void => {
    acceptOne(this, tenantId, event, now);
  };

  async ensureSystemDestination(
    tenant: NewTenant,
    destination: NewDestination,
    now: number,
  ): Promise<Destination> {
    return alerts.ensureSystemDestination(this, tenant, destination, now);
  }

  // ---- the event-type catalog: event-types.ts

  async createEventType(name: string, fields: EventTypeFields, now: number): Promise<EventType | undefined> {
    return eventTypes.createEventType(this, name, fields, now);
  }

  async getEventType(name: string): Promise<EventType | undefined> {
    return eventTypes.getEventType(this, name);
  }

  async updateEventType(name: string, fields: EventTypeFields, now: number): Promise<EventType | undefined> {
    return eventTypes.updateEventType(this, name, fields, now);
  }

  async deleteEventType(name: string): Promise<boolean> {
    return eventTypes.deleteEventType(this, name);
  }

  async listEventTypes(page: EventTypePageRequest): Promise<Page<EventType>> {
    return eventTypes.listEventTypes(this, page);
  }

  // ---- portal links: portal-links.ts

  async createPortalLink(link: NewPortalLink): Promise<PortalLink | undefined> {
    return portalLinks.createPortalLink(this, link);
  }

  async portalLinkByHash(hash: string): Promise<PortalLinkMatch | undefined> {
    return portalLinks.portalLinkByHash(this, hash);
  }

  async getPortalLink(id: string): Promise<PortalLink | undefined> {
    return portalLinks.getPortalLink(this, id);
  }

  async listPortalLinks(tenantId: string | undefined, page: PageRequest): Promise<Page<PortalLink>> {
    return portalLinks.listPortalLinks(this, tenantId, page);
  }

  async deletePortalLink(id: string): Promise<boolean> {
    return portalLinks.deletePortalLink(this, id);
  }

  /** Answers, and can write: while a full disk refused a write, a probe write decides (DiskFull). */
  async ping(): Promise<void> {
    this.sql('SELECT 1').get();
    await this.diskFull.check();
  }

  async close(): Promise<void> {
    if (this.db.isOpen) {
      await this.accepts.close();
      this.claims.commit();
      await this.checkpointer?.close();
      this.db.close();
    }
  }
}
