/**
 * The SQLite store's destinations. A deleted destination is kept (its deliveries
 * and attempts point at it) with `deleted_at` set, and is found by no read here.
 */

import { sqlSourcesOf } from '@sluice/core';
import {
  type Destination,
  type DestinationPatch,
  insertDestinationSql,
  insertRateLimitChangeSql,
  insertValues,
  type NewDestination,
  newDestinationRecord,
  type OperationalNotice,
  patchedDestination,
  type RateLimitChange,
  rateLimitChangeFromRow,
  rateLimitChangesSql,
  rateLimitChangeValues,
  sameRateLimit,
  updateDestinationSql,
  updateValues,
} from '@sluice/store';
import type { Sql } from './lists.ts';
import { emitNotices } from './operational.ts';
import { WITH_PENDING } from './pending.ts';
import { destinationFromRow, mark } from './rows.ts';

const INSERT_DESTINATION = insertDestinationSql(mark);
const UPDATE_DESTINATION = updateDestinationSql(mark);
const INSERT_RATE_LIMIT_CHANGE = insertRateLimitChangeSql(mark);
const RATE_LIMIT_CHANGES = rateLimitChangesSql(mark);
const LIVE_DESTINATION = 'SELECT * FROM destinations WHERE id = ? AND deleted_at IS NULL';

export function createDestination(db: Sql, input: NewDestination, now: number): Destination {
  const destination = newDestinationRecord(input, now);
  db.sql(INSERT_DESTINATION).run(...insertValues(destination, db.keyring));
  return destination;
}

export function getDestination(db: Sql, id: string): Destination | undefined {
  const r = db.sql(LIVE_DESTINATION).get(id);
  return r && destinationFromRow(r, db.keyring);
}

export function updateDestination(
  db: Sql,
  id: string,
  patch: DestinationPatch,
  now: number,
  notices: readonly OperationalNotice[] = [],
): Destination | undefined {
  return db.tx(() => {
    const r = db.sql(LIVE_DESTINATION).get(id);
    if (!r) return undefined;
    const before = destinationFromRow(r, db.keyring);
    const next = patchedDestination(before, patch, now);
    db.sql(UPDATE_DESTINATION).run(...updateValues(next, db.keyring));
    if (notices.length > 0) emitNotices(db, notices, now);
    if (!sameRateLimit(before.rateLimit, next.rateLimit))
      db.sql(INSERT_RATE_LIMIT_CHANGE).run(
        ...rateLimitChangeValues(id, { at: now, from: before.rateLimit, to: next.rateLimit }),
      );
    return next;
  });
}

export function rateLimitChanges(db: Sql, id: string, from: number, to: number): RateLimitChange[] {
  return db.sql(RATE_LIMIT_CHANGES).all(id, from, to).map(rateLimitChangeFromRow);
}

export function deleteDestination(db: Sql, id: string, now: number): boolean {
  return db.tx(() => deleteDestinationIn(db, id, now));
}

/** The deletion of a destination, inside the caller's transaction (a tenant's deletion runs it too). */
export function deleteDestinationIn(db: Sql, id: string, now: number): boolean {
  const { changes } = db
    .sql('UPDATE destinations SET deleted_at = ?, updated_at = ? WHERE id = ? AND deleted_at IS NULL')
    .run(now, now, id);
  if (changes === 0) return false;
  db.sql(
    `UPDATE deliveries SET status = 'cancelled', updated_at = ?, claimed_at = NULL
     WHERE destination_id = ? AND status IN (${sqlSourcesOf('cancel')})`,
  ).run(now, id);
  return true;
}

export function listDestinations(db: Sql, tenantId: string): Destination[] {
  return db
    .sql('SELECT * FROM destinations WHERE tenant_id = ? AND deleted_at IS NULL ORDER BY id')
    .all(tenantId)
    .map((r) => destinationFromRow(r, db.keyring));
}

export function cancelOrphans(db: Sql, now: number): number {
  const { changes } = db
    .sql(
      `UPDATE deliveries SET status = 'cancelled', updated_at = ?
       WHERE status = 'pending' AND destination_id IN (
         ${WITH_PENDING}
         SELECT t.id FROM pending p JOIN destinations t ON t.id = p.id WHERE t.deleted_at IS NOT NULL)`,
    )
    .run(now);
  return Number(changes);
}
