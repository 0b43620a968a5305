/**
 * The SQLite store's listings and housekeeping: pages newest first (ids are ULIDs, so
 * `id < cursor ORDER BY id DESC` is stable while rows are added), event and delivery lookup,
 * replay, manual retry and retention.
 */

import type { StatementSync } from 'node:sqlite';
import { type Keyring, sqlSourcesOf } from '@sluice/core';
import {
  type Attempt,
  type Condition,
  type Delivery,
  type DeliveryFilter,
  type Destination,
  deliveryConditions,
  eventFromRow,
  type Page,
  type PageRequest,
  pageOf,
  pageStatement,
  type RetentionResult,
  type RetryResult,
  type Row,
  type StoredEvent,
  type Tenant,
  tenantFromRow,
} from '@sluice/store';
import { attemptFromRow, deliveryFromRow, destinationFromRow, mark } from './rows.ts';

export interface Sql {
  /** Seals and opens the destinations' signing secrets (`@sluice/store`'s rows). */
  readonly keyring: Keyring;
  sql(text: string): StatementSync;
  tx<T>(fn: () => T): T;
}

/** A page of `table`'s rows (`pageStatement`). */
function pageQuery(
  db: Sql,
  table: string,
  fixed: string[],
  conditions: Condition[],
  req: PageRequest,
): Row[] {
  const { text, values } = pageStatement(mark, table, '*', fixed, conditions, req);
  return db.sql(text).all(...values);
}

export function listTenants(db: Sql, req: PageRequest): Page<Tenant> {
  return pageOf(pageQuery(db, 'tenants', ['deleted_at IS NULL'], [], req), req.limit, tenantFromRow);
}

export function pageDestinations(db: Sql, tenantId: string | undefined, req: PageRequest): Page<Destination> {
  const conditions: Condition[] = tenantId === undefined ? [] : [['tenant_id', tenantId]];
  return pageOf(pageQuery(db, 'destinations', ['deleted_at IS NULL'], conditions, req), req.limit, (r) =>
    destinationFromRow(r, db.keyring),
  );
}

export function listDeliveries(db: Sql, filter: DeliveryFilter, req: PageRequest): Page<Delivery> {
  return pageOf(pageQuery(db, 'deliveries', [], deliveryConditions(filter), req), req.limit, deliveryFromRow);
}

export function getEvent(db: Sql, id: string): { event: StoredEvent; deliveries: Delivery[] } | undefined {
  const r = db.sql('SELECT * FROM events WHERE id = ?').get(id);
  if (!r) return undefined;
  const deliveries = db
    .sql('SELECT * FROM deliveries WHERE event_id = ? ORDER BY rowid')
    .all(id)
    .map(deliveryFromRow);
  return { event: eventFromRow(r), deliveries };
}

export function getDelivery(db: Sql, id: string): { delivery: Delivery; attempts: Attempt[] } | undefined {
  const r = db.sql('SELECT * FROM deliveries WHERE id = ?').get(id);
  if (!r) return undefined;
  const attempts = db
    .sql('SELECT * FROM attempts WHERE delivery_id = ? ORDER BY attempt')
    .all(id)
    .map(attemptFromRow);
  return { delivery: deliveryFromRow(r), attempts };
}

export function replayDead(db: Sql, destinationId: string, since: number | null, now: number): number {
  const { changes } = db
    .sql(
      `UPDATE deliveries SET status = 'pending', next_attempt_at = ?, attempt_base = attempts, updated_at = ?
       WHERE destination_id = ? AND status IN (${sqlSourcesOf('replay')}) AND updated_at >= ?
         AND EXISTS (SELECT 1 FROM destinations t WHERE t.id = destination_id AND t.deleted_at IS NULL)`,
    )
    .run(now, now, destinationId, since ?? 0);
  return Number(changes);
}

export function retryDelivery(db: Sql, id: string, now: number): RetryResult {
  return db.tx(() => {
    const r = db
      .sql(
        `SELECT d.status, t.deleted_at FROM deliveries d LEFT JOIN destinations t ON t.id = d.destination_id
         WHERE d.id = ?`,
      )
      .get(id);
    if (!r) return { ok: false, reason: 'not_found' } as const;
    const retryable = (r.status === 'dead' || r.status === 'pending') && r.deleted_at === null;
    if (!retryable) return { ok: false, reason: 'conflict' } as const;
    db.sql(
      `UPDATE deliveries SET status = 'pending', next_attempt_at = ?, attempt_base = attempts, updated_at = ?
       WHERE id = ?`,
    ).run(now, now, id);
    return {
      ok: true,
      delivery: deliveryFromRow(db.sql('SELECT * FROM deliveries WHERE id = ?').get(id) as Row),
    };
  });
}

export function deleteExpired(db: Sql, before: number, batch: number): RetentionResult {
  return db.tx(() => {
    const ids = db
      .sql(
        `SELECT id FROM deliveries WHERE status IN ('delivered', 'cancelled') AND updated_at < ?
         ORDER BY updated_at LIMIT ?`,
      )
      .all(before, batch)
      .map((r) => r.id as string);
    const list = JSON.stringify(ids);
    const attempts = db
      .sql('DELETE FROM attempts WHERE delivery_id IN (SELECT value FROM json_each(?))')
      .run(list);
    const deliveries = db
      .sql('DELETE FROM deliveries WHERE id IN (SELECT value FROM json_each(?))')
      .run(list);
    const events = db
      .sql(
        `DELETE FROM events WHERE id IN (
           SELECT e.id FROM events e WHERE e.created_at < ?
             AND NOT EXISTS (SELECT 1 FROM deliveries d WHERE d.event_id = e.id)
           ORDER BY e.created_at LIMIT ?)`,
      )
      .run(before, batch);
    // Oldest first by id (ids grow with time): the scan stops after `batch` expired rows.
    const transitions = db
      .sql(
        `DELETE FROM destination_health_transitions WHERE id IN (
           SELECT id FROM destination_health_transitions WHERE at < ? ORDER BY id LIMIT ?)`,
      )
      .run(before, batch);
    const limitChanges = db
      .sql(
        `DELETE FROM rate_limit_changes WHERE id IN (
           SELECT id FROM rate_limit_changes WHERE at < ? ORDER BY id LIMIT ?)`,
      )
      .run(before, batch);
    return {
      deliveries: Number(deliveries.changes),
      attempts: Number(attempts.changes),
      events: Number(events.changes),
      transitions: Number(transitions.changes) + Number(limitChanges.changes),
    };
  });
}
