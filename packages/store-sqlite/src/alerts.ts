/**
 * Backlog alerts on SQLite (ADR 0009): the backlog read of every destination, and the alert
 * state. node:sqlite runs one statement at a time in this process, and the primary key of
 * `backlog_alerts` keeps even a second process on the file from raising an alert twice.
 */

import type { BacklogSample, FiringAlert } from '@sluice/core';
import {
  type AlertNotice,
  alertFromRow,
  backlogSampleFromRow,
  type Destination,
  insertValues,
  type NewDestination,
  type NewEvent,
  type NewTenant,
  newDestinationRecord,
  type OperationalNotice,
  type Row,
  upsertDestinationSql,
} from '@sluice/store';
import type { Sql } from './lists.ts';
import { emitNotices } from './operational.ts';
import { WITH_PENDING } from './pending.ts';
import { destinationFromRow, mark } from './rows.ts';

type Accept = (tenantId: string, event: NewEvent, now: number) => void;

/**
 * Per destination: the pending deliveries counted up to `cap` (a LIMIT inside the count, on
 * `deliveries_due`) and the earliest due time (one probe of the same index).
 */
export function backlogSamples(db: Sql, cap: number, exceptTenantId: string): BacklogSample[] {
  return db
    .sql(
      `${WITH_PENDING}
       SELECT t.id AS destination_id, t.tenant_id,
         (SELECT count(*) FROM (SELECT 1 FROM deliveries d
            WHERE d.destination_id = t.id AND d.status = 'pending' LIMIT ?)) AS pending,
         (SELECT min(d.next_attempt_at) FROM deliveries d
            WHERE d.destination_id = t.id AND d.status = 'pending') AS oldest
       FROM pending p JOIN destinations t ON t.id = p.id
       WHERE t.deleted_at IS NULL AND t.tenant_id <> ?`,
    )
    .all(Math.max(1, cap), exceptTenantId)
    .filter((r) => (r.pending as number) > 0)
    .map(backlogSampleFromRow);
}

export function listAlerts(db: Sql, tenantId: string | undefined): FiringAlert[] {
  const rows =
    tenantId === undefined
      ? db.sql('SELECT * FROM backlog_alerts ORDER BY destination_id, kind').all()
      : db
          .sql('SELECT * FROM backlog_alerts WHERE tenant_id = ? ORDER BY destination_id, kind')
          .all(tenantId);
  return rows.map(alertFromRow);
}

/**
 * The write of each change: a raise inserts unless an alert of its destination and kind is
 * firing; a resolve deletes the one raised at `raisedAt`. Each changes one row or none.
 */
const WRITES = {
  raise: (db: Sql, a: FiringAlert) =>
    db
      .sql(
        `INSERT INTO backlog_alerts (destination_id, kind, tenant_id, threshold, value, raised_at)
         VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`,
      )
      .run(a.destinationId, a.kind, a.tenantId, a.threshold, a.value, a.raisedAt).changes,
  resolve: (db: Sql, a: FiringAlert) =>
    db
      .sql('DELETE FROM backlog_alerts WHERE destination_id = ? AND kind = ? AND raised_at = ?')
      .run(a.destinationId, a.kind, a.raisedAt).changes,
};

/**
 * Raises or resolves the alert in a transaction; when the write changed its row (this caller
 * won), accepts the notice's event in the same transaction, and the tenant's operational
 * event (`sluice.backlog.…`) with it.
 */
export function changeAlert(
  db: Sql,
  accept: Accept,
  change: keyof typeof WRITES,
  alert: FiringAlert,
  notice: AlertNotice | null,
  now: number,
  operational?: OperationalNotice,
): boolean {
  return db.tx(() => {
    if (Number(WRITES[change](db, alert)) === 0) return false;
    if (notice !== null) accept(notice.tenantId, notice.event, now);
    if (operational !== undefined) emitNotices(db, [operational], now);
    return true;
  });
}

const UPSERT_DESTINATION = upsertDestinationSql(mark);

export function ensureSystemDestination(
  db: Sql,
  tenant: NewTenant,
  input: NewDestination,
  now: number,
): Destination {
  return db.tx(() => {
    db.sql(
      'INSERT INTO tenants (id, name, api_key_hash, created_at) VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING',
    ).run(tenant.id, tenant.name, `none:${tenant.id}`, tenant.createdAt);
    db.sql(UPSERT_DESTINATION).run(...insertValues(newDestinationRecord(input, now), db.keyring));
    const row = db.sql('SELECT * FROM destinations WHERE id = ?').get(input.id) as Row;
    return destinationFromRow(row, db.keyring);
  });
}
