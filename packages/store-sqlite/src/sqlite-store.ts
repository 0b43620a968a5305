/**
 * The single-box Store on `node:sqlite` (DESIGN: one process, one file).
 *
 * node:sqlite is synchronous: every method runs to completion without yielding, so each is
 * atomic with respect to the rest of the process. Writes that must go together run in one
 * `BEGIN IMMEDIATE` transaction; accepting events commits before the method returns, which
 * is before the API answers 202. WAL lets readers (the API) go on during a write.
 */

import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { DatabaseSync, type StatementSync } from 'node:sqlite';
import {
  type BacklogSample,
  type ClaimOrder,
  type FiringAlert,
  HEALTHY,
  type HealthPolicy,
  type HealthState,
  newId,
  sqlSourcesOf,
} from '@sluice/core';
import type {
  AcceptResult,
  AlertNotice,
  Attempt,
  Claim,
  CompletedAttempt,
  Delivery,
  DeliveryFilter,
  Destination,
  DestinationCounts,
  DestinationPatch,
  DestinationWork,
  HealthChange,
  HealthTransition,
  NewDestination,
  NewEvent,
  Page,
  PageRequest,
  ProbeClaim,
  RetentionResult,
  RetryResult,
  StaleClaim,
  Store,
  StoredEvent,
  Tenant,
} from '@sluice/engine';
import * as alerts from './alerts.ts';
import { Checkpointer } from './checkpointer.ts';
import * as claim from './claim.ts';
import { countsForMany } from './counts.ts';
import * as health from './health.ts';
import * as lists from './lists.ts';
import { migrate } from './migrate.ts';
import { WITH_PENDING } from './pending.ts';
import { attemptFromRow, deliveryFromRow, destinationFromRow, destinationParams } from './rows.ts';
import { TurnBatch } from './turn-batch.ts';

export type Synchronous = 'full' | 'normal';

export interface SqliteStoreOptions {
  /**
   * `full`: what the API answered for (accepted events, tenants, destinations, replays)
   * survives power loss; `normal` (WAL): everything survives a crash of the process only.
   * Delivery progress (claims, attempts, outcomes) is written `normal` either way: losing
   * it to power loss means a repeat with the same `webhook-id`, which at-least-once allows
   * after a crash (DESIGN I6), and it is most of the writes (docs/adr/0003).
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

type Row = Record<string, unknown>;

interface PendingAccept {
  tenantId: string;
  events: NewEvent[];
  now: number;
}

interface PendingClaim {
  destinationId: string;
  max: number;
  now: number;
  order: ClaimOrder;
}

export class SqliteStore implements Store {
  readonly db: DatabaseSync;
  private readonly cache = new Map<string, StatementSync>();
  private readonly full: boolean;
  private readonly accepts: TurnBatch<PendingAccept, AcceptResult[]>;
  private readonly claims: TurnBatch<PendingClaim, Claim>;
  private readonly checkpointer: Checkpointer | undefined;

  constructor(path: string, options: SqliteStoreOptions = {}) {
    if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
    this.db = new DatabaseSync(path, { timeout: 5_000 });
    this.db.exec('PRAGMA journal_mode = WAL');
    this.full = options.synchronous !== 'normal';
    this.db.exec(`PRAGMA synchronous = ${this.full ? 'FULL' : 'NORMAL'}`);
    this.db.exec('PRAGMA foreign_keys = ON');
    migrate(this.db);
    const intervalMs = options.checkpointIntervalMs;
    this.checkpointer =
      intervalMs === undefined || path === ':memory:'
        ? undefined
        : new Checkpointer(this.db, { path, intervalMs, restartPages: options.walRestartPages });
    this.accepts = new TurnBatch({
      db: this.db,
      tx: (fn) => this.tx(fn),
      one: ({ tenantId, events, now }: PendingAccept) =>
        events.map((event) => this.acceptOne(tenantId, event, now)),
    });
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
      this.db.exec('ROLLBACK');
      throw err;
    }
  }

  async createTenant(tenant: Tenant, apiKeyHash: string): Promise<void> {
    this.sql('INSERT INTO tenants (id, name, api_key_hash, created_at) VALUES (?, ?, ?, ?)').run(
      tenant.id,
      tenant.name,
      apiKeyHash,
      tenant.createdAt,
    );
  }

  async getTenant(id: string): Promise<Tenant | undefined> {
    const r = this.sql('SELECT id, name, created_at FROM tenants WHERE id = ?').get(id);
    return r && { id: r.id as string, name: r.name as string, createdAt: r.created_at as number };
  }

  async tenantByKeyHash(hash: string): Promise<Tenant | undefined> {
    const r = this.sql('SELECT id, name, created_at FROM tenants WHERE api_key_hash = ?').get(hash);
    return r && { id: r.id as string, name: r.name as string, createdAt: r.created_at as number };
  }

  async listTenants(page: PageRequest): Promise<Page<Tenant>> {
    return lists.listTenants(this, page);
  }

  async pageDestinations(tenantId: string | undefined, page: PageRequest): Promise<Page<Destination>> {
    return lists.pageDestinations(this, tenantId, page);
  }

  async getEvent(id: string): Promise<{ event: StoredEvent; deliveries: Delivery[] } | undefined> {
    return lists.getEvent(this, id);
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

  async createDestination(input: NewDestination, now: number): Promise<Destination> {
    const destination: Destination = {
      ...input,
      state: 'active',
      disabledReason: null,
      createdAt: now,
      updatedAt: now,
      health: { ...HEALTHY },
    };
    this.sql(
      `INSERT INTO destinations (id, tenant_id, name, url, rate_limit, rate_period, max_concurrency, ordering,
         rate_burst, adaptive, event_types,
         retry_max_attempts, retry_initial_delay_ms, retry_max_delay_ms, timeout_ms, secrets, state,
         disabled_reason, created_at, updated_at)
       VALUES ($id, $tenant_id, $name, $url, $rate_limit, $rate_period, $max_concurrency, $ordering,
         $rate_burst, $adaptive, $event_types,
         $retry_max_attempts, $retry_initial_delay_ms, $retry_max_delay_ms, $timeout_ms, $secrets, $state,
         $disabled_reason, $created_at, $updated_at)`,
    ).run(destinationParams(destination));
    return destination;
  }

  async getDestination(id: string): Promise<Destination | undefined> {
    const r = this.sql('SELECT * FROM destinations WHERE id = ? AND deleted_at IS NULL').get(id);
    return r && destinationFromRow(r);
  }

  async updateDestination(
    id: string,
    patch: DestinationPatch,
    now: number,
  ): Promise<Destination | undefined> {
    return this.tx(() => {
      const r = this.sql('SELECT * FROM destinations WHERE id = ? AND deleted_at IS NULL').get(id);
      if (!r) return undefined;
      const defined = Object.fromEntries(Object.entries(patch).filter(([, v]) => v !== undefined));
      const next: Destination = { ...destinationFromRow(r), ...defined, updatedAt: now };
      this.sql(
        `UPDATE destinations SET name = $name, url = $url, rate_limit = $rate_limit, rate_period = $rate_period,
           max_concurrency = $max_concurrency, ordering = $ordering, rate_burst = $rate_burst,
           adaptive = $adaptive, event_types = $event_types, retry_max_attempts = $retry_max_attempts,
           retry_initial_delay_ms = $retry_initial_delay_ms, retry_max_delay_ms = $retry_max_delay_ms,
           timeout_ms = $timeout_ms, secrets = $secrets, state = $state, disabled_reason = $disabled_reason,
           updated_at = $updated_at
         WHERE id = $id`,
      ).run(omit(destinationParams(next), 'tenant_id', 'created_at'));
      return next;
    });
  }

  async deleteDestination(id: string, now: number): Promise<boolean> {
    return this.tx(() => {
      const { changes } = this.sql(
        'UPDATE destinations SET deleted_at = ?, updated_at = ? WHERE id = ? AND deleted_at IS NULL',
      ).run(now, now, id);
      if (changes === 0) return false;
      this.sql(
        `UPDATE deliveries SET status = 'cancelled', updated_at = ?, claimed_at = NULL
         WHERE destination_id = ? AND status IN (${sqlSourcesOf('cancel')})`,
      ).run(now, id);
      return true;
    });
  }

  async cancelOrphans(now: number): Promise<number> {
    const { changes } = this.sql(
      `UPDATE deliveries SET status = 'cancelled', updated_at = ?
       WHERE status = 'pending' AND destination_id IN (
         ${WITH_PENDING}
         SELECT t.id FROM pending p JOIN destinations t ON t.id = p.id WHERE t.deleted_at IS NOT NULL)`,
    ).run(now);
    return Number(changes);
  }

  async listDestinations(tenantId: string): Promise<Destination[]> {
    return this.sql('SELECT * FROM destinations WHERE tenant_id = ? AND deleted_at IS NULL ORDER BY id')
      .all(tenantId)
      .map(destinationFromRow);
  }

  /** The accepts of one turn share one durable commit (one fsync): `turn-batch.ts`. */
  acceptEvents(tenantId: string, events: NewEvent[], now: number): Promise<AcceptResult[]> {
    return this.accepts.run({ tenantId, events, now });
  }

  private acceptOne(tenantId: string, event: NewEvent, now: number): AcceptResult {
    if (event.idempotencyKey !== null) {
      const first = this.sql('SELECT id FROM events WHERE tenant_id = ? AND idempotency_key = ?').get(
        tenantId,
        event.idempotencyKey,
      );
      if (first) {
        const eventId = first.id as string;
        const deliveries = this.sql(
          'SELECT id, destination_id FROM deliveries WHERE event_id = ? ORDER BY rowid',
        )
          .all(eventId)
          .map((r) => ({ id: r.id as string, destinationId: r.destination_id as string }));
        return { event: { id: eventId, deliveries }, replayed: true };
      }
    }
    const id = newId('evt');
    this.sql(
      'INSERT INTO events (id, tenant_id, type, payload, idempotency_key, created_at) VALUES (?, ?, ?, ?, ?, ?)',
    ).run(id, tenantId, event.type, event.payload, event.idempotencyKey, now);
    // No sequence yet (0): a delivery takes one when it is first claimed (claim.ts).
    const insert = this.sql(
      `INSERT INTO deliveries (id, event_id, destination_id, tenant_id, status, attempts, next_attempt_at,
         created_at, updated_at)
       VALUES (?, ?, ?, ?, 'pending', 0, ?, ?, ?)`,
    );
    const deliveries = event.destinationIds.map((destinationId) => {
      const deliveryId = newId('dlv');
      insert.run(deliveryId, id, destinationId, tenantId, now, now, now);
      return { id: deliveryId, destinationId };
    });
    return { event: { id, deliveries }, replayed: false };
  }

  async getDelivery(id: string): Promise<{ delivery: Delivery; attempts: Attempt[] } | undefined> {
    const r = this.sql('SELECT * FROM deliveries WHERE id = ?').get(id);
    if (!r) return undefined;
    const attempts = this.sql('SELECT * FROM attempts WHERE delivery_id = ? ORDER BY attempt')
      .all(id)
      .map(attemptFromRow);
    return { delivery: deliveryFromRow(r), attempts };
  }

  /** The claims of the ticks started together (one timer) share one commit: `turn-batch.ts`. */
  claimDue(destinationId: string, max: number, now: number, order: ClaimOrder = 'due'): Promise<Claim> {
    return this.claims.run({ destinationId, max, now, order });
  }

  async completeAttempts(
    completed: CompletedAttempt[],
    now: number,
    policy?: HealthPolicy,
  ): Promise<HealthChange[]> {
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
    const pending = this.sql(
      `SELECT next_attempt_at FROM deliveries WHERE destination_id = ? AND status = 'pending'
       ORDER BY next_attempt_at LIMIT 1`,
    ).get(destinationId);
    const claimed = this.sql(
      `SELECT count(*) AS n FROM deliveries WHERE destination_id = ? AND status IN ('queued', 'delivering')`,
    ).get(destinationId) as Row;
    return {
      nextPendingAt: pending ? (pending.next_attempt_at as number) : null,
      inQueue: claimed.n as number,
    };
  }

  async pendingDestinations(): Promise<{ destinationId: string; nextPendingAt: number }[]> {
    return this.sql(
      `${WITH_PENDING}
       SELECT t.id AS destination_id,
         (SELECT min(d.next_attempt_at) FROM deliveries d WHERE d.destination_id = t.id AND d.status = 'pending')
           AS next_pending_at
       FROM pending p JOIN destinations t ON t.id = p.id
       WHERE t.state = 'active' AND t.deleted_at IS NULL`,
    )
      .all()
      .filter((r) => r.next_pending_at !== null)
      .map((r) => ({
        destinationId: r.destination_id as string,
        nextPendingAt: r.next_pending_at as number,
      }));
  }

  async oldestDueAt(now: number): Promise<number | null> {
    const row = this.sql(
      `${WITH_PENDING}
       SELECT min((SELECT min(d.next_attempt_at) FROM deliveries d
                   WHERE d.destination_id = t.id AND d.status = 'pending')) AS oldest
       FROM pending p JOIN destinations t ON t.id = p.id
       WHERE t.state = 'active' AND t.deleted_at IS NULL`,
    ).get();
    const oldest = (row?.oldest as number | null | undefined) ?? null;
    return oldest !== null && oldest <= now ? oldest : null;
  }

  async requeue(claimedBefore: number, keep: ReadonlySet<string>, now: number): Promise<Map<string, number>> {
    return this.tx(() => {
      const rows = this.sql(
        `SELECT id, destination_id FROM deliveries
         WHERE status IN ('queued', 'delivering') AND claimed_at < ?`,
      ).all(claimedBefore);
      const perDestination = new Map<string, number>();
      const ids: string[] = [];
      for (const r of rows) {
        if (keep.has(r.id as string)) continue;
        ids.push(r.id as string);
        const d = r.destination_id as string;
        perDestination.set(d, (perDestination.get(d) ?? 0) + 1);
      }
      if (ids.length > 0) {
        this.sql(
          `UPDATE deliveries SET status = 'pending', claimed_at = NULL, next_attempt_at = ?, updated_at = ?
           WHERE id IN (SELECT value FROM json_each(?)) AND status IN ('queued', 'delivering')`,
        ).run(now, now, JSON.stringify(ids));
      }
      return perDestination;
    });
  }

  async releaseClaims(deliveryIds: readonly string[], now: number): Promise<number> {
    if (deliveryIds.length === 0) return 0;
    return this.tx(() =>
      Number(
        this.sql(
          `UPDATE deliveries SET status = 'pending', claimed_at = NULL, updated_at = ?
             WHERE id IN (SELECT value FROM json_each(?)) AND status = 'queued'`,
        ).run(now, JSON.stringify(deliveryIds)).changes,
      ),
    );
  }

  async staleClaims(claimedBefore: number): Promise<StaleClaim[]> {
    return this.sql(
      `SELECT id, destination_id, attempts FROM deliveries
       WHERE status IN ('queued', 'delivering') AND claimed_at < ? ORDER BY id`,
    )
      .all(claimedBefore)
      .map((r) => ({
        id: r.id as string,
        destinationId: r.destination_id as string,
        attempts: r.attempts as number,
      }));
  }

  async recentAttempts(
    since: number,
  ): Promise<{ destinationId: string; startedAt: number; finishedAt: number }[]> {
    return this.sql(
      'SELECT destination_id, started_at, finished_at FROM attempts WHERE started_at >= ? ORDER BY started_at',
    )
      .all(since)
      .map((r) => ({
        destinationId: r.destination_id as string,
        startedAt: r.started_at as number,
        finishedAt: r.finished_at as number,
      }));
  }

  async countsFor(destinationId: string, since: number, _now: number): Promise<DestinationCounts> {
    const pending = this.sql(
      `SELECT count(*) AS n, min(created_at) AS oldest FROM deliveries
       WHERE destination_id = ? AND status = 'pending'`,
    ).get(destinationId) as Row;
    const claimed = this.sql(
      `SELECT count(*) AS n FROM deliveries WHERE destination_id = ? AND status IN ('queued', 'delivering')`,
    ).get(destinationId) as Row;
    const settled = this.sql(
      `SELECT status, count(*) AS n FROM deliveries
       WHERE destination_id = ? AND status IN ('delivered', 'dead') AND updated_at >= ? GROUP BY status`,
    ).all(destinationId, since);
    const settledCount = (status: string): number =>
      (settled.find((r) => r.status === status)?.n as number) ?? 0;
    return {
      pending: pending.n as number,
      inQueue: claimed.n as number,
      oldestPendingAt: (pending.oldest as number | null) ?? null,
      delivered: settledCount('delivered'),
      dead: settledCount('dead'),
    };
  }

  async countsForMany(destinationIds: string[], since: number): Promise<Map<string, DestinationCounts>> {
    return countsForMany(this, destinationIds, since);
  }

  async attemptTimes(destinationId: string, from: number, to: number): Promise<number[]> {
    return this.sql(
      `SELECT started_at FROM attempts WHERE destination_id = ? AND started_at >= ? AND started_at < ?
       ORDER BY started_at`,
    )
      .all(destinationId, from, to)
      .map((r) => r.started_at as number);
  }

  // ---- backlog alerts (ADR 0009): alerts.ts

  async backlogSamples(cap: number, exceptTenantId: string): Promise<BacklogSample[]> {
    return alerts.backlogSamples(this, cap, exceptTenantId);
  }

  async listAlerts(tenantId?: string): Promise<FiringAlert[]> {
    return alerts.listAlerts(this, tenantId);
  }

  async raiseAlert(alert: FiringAlert, notice: AlertNotice | null, now: number): Promise<boolean> {
    return alerts.raiseAlert(this, this.acceptAlert, alert, notice, now);
  }

  async resolveAlert(alert: FiringAlert, notice: AlertNotice | null, now: number): Promise<boolean> {
    return alerts.resolveAlert(this, this.acceptAlert, alert, notice, now);
  }

  private readonly acceptAlert = (tenantId: string, event: NewEvent, now: number): void => {
    this.acceptOne(tenantId, event, now);
  };

  async ensureSystemDestination(
    tenant: Tenant,
    destination: NewDestination,
    now: number,
  ): Promise<Destination> {
    return alerts.ensureSystemDestination(this, tenant, destination, now);
  }

  async ping(): Promise<void> {
    this.sql('SELECT 1').get();
  }

  async close(): Promise<void> {
    if (this.db.isOpen) {
      this.accepts.commit();
      this.claims.commit();
      await this.checkpointer?.close();
      this.db.close();
    }
  }
}

function omit<V>(obj: Record<string, V>, ...keys: string[]): Record<string, V> {
  const copy = { ...obj };
  for (const key of keys) delete copy[key];
  return copy;
}
