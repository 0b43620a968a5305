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
  newDestinationRecord,
  type Row,
  type Tenant,
  upsertDestinationSql,
} from '@sluice/store';
import type { Sql } from './lists.ts';
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
 * Runs the alert's write in a transaction; when it changed a row (this caller won), accepts
 * the notice's event in the same transaction.
 */
function changeAlert(
  db: Sql,
  accept: Accept,
  notice: AlertNotice | null,
  now: number,
  write: () => number,
): boolean {
  return db.tx(() => {
    if (write() === 0) return false;
    if (notice !== null) accept(notice.tenantId, notice.event, now);
    return true;
  });
}

export function raiseAlert(
  db: Sql,
  accept: Accept,
  alert: FiringAlert,
  notice: AlertNotice | null,
  now: number,
): boolean {
  return changeAlert(db, accept, notice, now, () =>
    Number(
      db
        .sql(
          `INSERT INTO backlog_alerts (destination_id, kind, tenant_id, threshold, value, raised_at)
           VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`,
        )
        .run(alert.destinationId, alert.kind, alert.tenantId, alert.threshold, alert.value, alert.raisedAt)
        .changes,
    ),
  );
}

export function resolveAlert(
  db: Sql,
  accept: Accept,
  alert: FiringAlert,
  notice: AlertNotice | null,
  now: number,
): boolean {
  return changeAlert(db, accept, notice, now, () =>
    Number(
      db
        .sql('DELETE FROM backlog_alerts WHERE destination_id = ? AND kind = ? AND raised_at = ?')
        .run(alert.destinationId, alert.kind, alert.raisedAt).changes,
    ),
  );
}

const UPSERT_DESTINATION = upsertDestinationSql(mark);

export function ensureSystemDestination(
  db: Sql,
  tenant: Tenant,
  input: NewDestination,
  now: number,
): Destination {
  return db.tx(() => {
    db.sql(
      'INSERT INTO tenants (id, name, api_key_hash, created_at) VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING',
    ).run(tenant.id, tenant.name, `none:${tenant.id}`, tenant.createdAt);
    db.sql(UPSERT_DESTINATION).run(...insertValues(newDestinationRecord(input, now)));
    const row = db.sql('SELECT * FROM destinations WHERE id = ?').get(input.id) as Row;
    return destinationFromRow(row);
  });
}
