/**
 * The Postgres store's listings and housekeeping: pages newest first (ids are ULIDs compared
 * bytewise, so `id < cursor ORDER BY id DESC` is stable while rows are added), event and
 * delivery lookup, replay, manual retry and retention.
 */

import { type Keyring, sqlSourcesOf } from '@sluice/core';
import {
  type Attempt,
  type Condition,
  type Delivery,
  type DeliveryFilter,
  type Destination,
  deliveryConditions,
  type Page,
  type PageRequest,
  pageOf,
  pageStatement,
  type RetentionResult,
  type RetryResult,
  type StoredEvent,
  TENANT_COLUMNS,
  type Tenant,
} from '@sluice/store';
import type { Db, Queryable, Row } from './db.ts';
import {
  attemptFromRow,
  DELIVERY_COLUMNS,
  deliveryFromRow,
  destinationFromRow,
  eventFromRow,
  mark,
  NOT_DELETED,
  tenantFromRow,
} from './rows.ts';

/** A page of `table`'s rows (`pageStatement`). */
async function pageQuery(
  db: Queryable,
  table: string,
  columns: string,
  fixed: string[],
  conditions: Condition[],
  req: PageRequest,
): Promise<Row[]> {
  const { text, values } = pageStatement(mark, table, columns, fixed, conditions, req);
  return db.query(text, values);
}

/** The tenants, newest first: a walk back along the primary key (`NOT_DELETED`, rows.ts). */
export async function listTenants(db: Queryable, req: PageRequest): Promise<Page<Tenant>> {
  const rows = await pageQuery(db, 'tenants', TENANT_COLUMNS, [NOT_DELETED], [], req);
  return pageOf(rows, req.limit, tenantFromRow);
}

/**
 * A tenant's destinations walk back along `destinations_tenant` (its entries under the tenant's
 * id are its live destinations); every tenant's along the primary key (`NOT_DELETED`, rows.ts).
 */
export async function pageDestinations(
  db: Queryable,
  keyring: Keyring,
  tenantId: string | undefined,
  req: PageRequest,
): Promise<Page<Destination>> {
  const rows =
    tenantId === undefined
      ? await pageQuery(db, 'destinations', '*', [NOT_DELETED], [], req)
      : await pageQuery(db, 'destinations', '*', ['deleted_at IS NULL'], [['tenant_id', tenantId]], req);
  return pageOf(rows, req.limit, (r) => destinationFromRow(r, keyring));
}

export async function listDeliveries(
  db: Queryable,
  filter: DeliveryFilter,
  req: PageRequest,
): Promise<Page<Delivery>> {
  const rows = await pageQuery(db, 'deliveries', DELIVERY_COLUMNS, [], deliveryConditions(filter), req);
  return pageOf(rows, req.limit, deliveryFromRow);
}

export async function getEvent(
  db: Queryable,
  id: string,
): Promise<{ event: StoredEvent; deliveries: Delivery[] } | undefined> {
  const [r] = await db.query('SELECT * FROM events WHERE id = $1', [id]);
  if (r === undefined) return undefined;
  const deliveries = await db.query(
    `SELECT ${DELIVERY_COLUMNS} FROM deliveries WHERE event_id = $1 ORDER BY seq`,
    [id],
  );
  return { event: eventFromRow(r), deliveries: deliveries.map(deliveryFromRow) };
}

export async function getDelivery(
  db: Queryable,
  id: string,
): Promise<{ delivery: Delivery; attempts: Attempt[] } | undefined> {
  const [r] = await db.query(`SELECT ${DELIVERY_COLUMNS} FROM deliveries WHERE id = $1`, [id]);
  if (r === undefined) return undefined;
  const attempts = await db.query('SELECT * FROM attempts WHERE delivery_id = $1 ORDER BY attempt', [id]);
  return { delivery: deliveryFromRow(r), attempts: attempts.map(attemptFromRow) };
}

export async function replayDead(
  db: Queryable,
  destinationId: string,
  since: number | null,
  now: number,
): Promise<number> {
  const [r] = await db.query(
    `WITH replayed AS (
       UPDATE deliveries SET status = 'pending', next_attempt_at = $1, attempt_base = attempts, updated_at = $1
       WHERE destination_id = $2 AND status IN (${sqlSourcesOf('replay')}) AND updated_at >= $3
         AND (SELECT t.deleted_at IS NULL FROM destinations t WHERE t.id = $2) -- by its key (rows.ts)
       RETURNING 1
     )
     SELECT count(*) AS n FROM replayed`,
    [now, destinationId, since ?? 0],
  );
  return (r?.n as number) ?? 0;
}

export async function retryDelivery(db: Db, id: string, now: number): Promise<RetryResult> {
  return db.tx(async (q) => {
    // Lock the delivery, so a claim or a completion cannot move it between look and write.
    const [r] = await q.query(
      `SELECT d.status, t.deleted_at FROM deliveries d LEFT JOIN destinations t ON t.id = d.destination_id
       WHERE d.id = $1 FOR UPDATE OF d`,
      [id],
    );
    if (r === undefined) return { ok: false, reason: 'not_found' } as const;
    const retryable = (r.status === 'dead' || r.status === 'pending') && r.deleted_at === null;
    if (!retryable) return { ok: false, reason: 'conflict' } as const;
    const [updated] = await q.query(
      `UPDATE deliveries SET status = 'pending', next_attempt_at = $2, attempt_base = attempts, updated_at = $2
       WHERE id = $1 RETURNING ${DELIVERY_COLUMNS}`,
      [id, now],
    );
    return { ok: true, delivery: deliveryFromRow(updated as Row) } as const;
  });
}

/**
 * One batch of retention: up to `batch` settled deliveries with their attempts, then up to
 * `batch` old events left without deliveries. Two statements in one transaction: the second
 * must see the deliveries the first deleted (one statement's parts share one snapshot).
 *
 * On the generic-plan pool (`Db.generic`), which plans no sequential scan: each statement
 * finds the rows it deletes by their keys. On the other pool, a connection's generic plan made
 * while the tables were nearly empty deletes the events, health transitions and rate-limit
 * changes through a hash join with their whole table, read again for every batch.
 */
export async function deleteExpired(
  db: Pick<Db, 'tx'>,
  before: number,
  batch: number,
): Promise<RetentionResult> {
  return db.tx(async (q) => {
    const [counts] = await q.query(
      `WITH doomed AS (
         SELECT id FROM deliveries WHERE status IN ('delivered', 'cancelled') AND updated_at < $1
         ORDER BY updated_at LIMIT $2
         FOR UPDATE SKIP LOCKED
       ), gone_attempts AS (
         DELETE FROM attempts WHERE delivery_id IN (SELECT id FROM doomed) RETURNING 1
       ), gone_deliveries AS (
         DELETE FROM deliveries WHERE id IN (SELECT id FROM doomed) RETURNING 1
       )
       SELECT (SELECT count(*) FROM gone_deliveries) AS deliveries, (SELECT count(*) FROM gone_attempts) AS attempts`,
      [before, batch],
    );
    const [events] = await q.query(
      `WITH gone_events AS (
         DELETE FROM events WHERE id IN (
           SELECT e.id FROM events e WHERE e.created_at < $1
             AND NOT EXISTS (SELECT 1 FROM deliveries d WHERE d.event_id = e.id)
           ORDER BY e.created_at LIMIT $2
           FOR UPDATE SKIP LOCKED)
         RETURNING 1
       )
       SELECT count(*) AS n FROM gone_events`,
      [before, batch],
    );
    // Oldest first by id (ids grow with time): the scan stops after `batch` expired rows.
    const [transitions] = await q.query(
      `WITH gone AS (
         DELETE FROM destination_health_transitions WHERE id IN (
           SELECT id FROM destination_health_transitions WHERE at < $1 ORDER BY id LIMIT $2
           FOR UPDATE SKIP LOCKED)
         RETURNING 1
       )
       SELECT count(*) AS n FROM gone`,
      [before, batch],
    );
    const [limitChanges] = await q.query(
      `WITH gone AS (
         DELETE FROM rate_limit_changes WHERE id IN (
           SELECT id FROM rate_limit_changes WHERE at < $1 ORDER BY id LIMIT $2
           FOR UPDATE SKIP LOCKED)
         RETURNING 1
       )
       SELECT count(*) AS n FROM gone`,
      [before, batch],
    );
    return {
      deliveries: (counts?.deliveries as number) ?? 0,
      attempts: (counts?.attempts as number) ?? 0,
      events: (events?.n as number) ?? 0,
      transitions: Number(transitions?.n ?? 0) + Number(limitChanges?.n ?? 0),
    };
  }, true);
}
