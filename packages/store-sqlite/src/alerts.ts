/**
 * Backlog alerts on SQLite (ADR 0009): the backlog read of every destination, and the alert
 * state. node:sqlite runs one statement at a time in this process, and the primary key of
 * `backlog_alerts` keeps even a second process on the file from raising an alert twice.
 */

import { type AlertKind, type BacklogSample, type FiringAlert, HEALTHY } from '@sluice/core';
import {
  type AlertNotice,
  DESTINATION_COLUMNS,
  type Destination,
  destinationParams,
  type NewDestination,
  type NewEvent,
  type Tenant,
} from '@sluice/engine';
import type { Sql } from './lists.ts';
import { WITH_PENDING } from './pending.ts';
import { destinationFromRow } from './rows.ts';

type Accept = (tenantId: string, event: NewEvent, now: number) => void;
type Row = Record<string, unknown>;

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
    .map((r) => ({
      destinationId: r.destination_id as string,
      tenantId: r.tenant_id as string,
      pending: r.pending as number,
      oldestDueAt: (r.oldest as number | null) ?? null,
    }));
}

function alertFromRow(r: Row): FiringAlert {
  return {
    destinationId: r.destination_id as string,
    tenantId: r.tenant_id as string,
    kind: r.kind as AlertKind,
    threshold: r.threshold as number,
    value: r.value as number,
    raisedAt: r.raised_at as number,
  };
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

export function raiseAlert(
  db: Sql,
  accept: Accept,
  alert: FiringAlert,
  notice: AlertNotice | null,
  now: number,
): boolean {
  return db.tx(() => {
    const { changes } = db
      .sql(
        `INSERT INTO backlog_alerts (destination_id, kind, tenant_id, threshold, value, raised_at)
         VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`,
      )
      .run(alert.destinationId, alert.kind, alert.tenantId, alert.threshold, alert.value, alert.raisedAt);
    if (Number(changes) === 0) return false;
    if (notice !== null) accept(notice.tenantId, notice.event, now);
    return true;
  });
}

export function resolveAlert(
  db: Sql,
  accept: Accept,
  alert: FiringAlert,
  notice: AlertNotice | null,
  now: number,
): boolean {
  return db.tx(() => {
    const { changes } = db
      .sql('DELETE FROM backlog_alerts WHERE destination_id = ? AND kind = ? AND raised_at = ?')
      .run(alert.destinationId, alert.kind, alert.raisedAt);
    if (Number(changes) === 0) return false;
    if (notice !== null) accept(notice.tenantId, notice.event, now);
    return true;
  });
}

/** Every column but the id, the owner and the creation time. */
const UPDATABLE = DESTINATION_COLUMNS.filter((c) => c !== 'id' && c !== 'tenant_id' && c !== 'created_at');

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
    const destination: Destination = {
      ...input,
      state: 'active',
      disabledReason: null,
      createdAt: now,
      updatedAt: now,
      health: { ...HEALTHY },
    };
    db.sql(
      `INSERT INTO destinations (${DESTINATION_COLUMNS.join(', ')})
       VALUES (${DESTINATION_COLUMNS.map((c) => `$${c}`).join(', ')})
       ON CONFLICT (id) DO UPDATE SET ${UPDATABLE.map((c) => `${c} = excluded.${c}`).join(', ')},
         deleted_at = NULL`,
    ).run(destinationParams(destination));
    const row = db.sql('SELECT * FROM destinations WHERE id = ?').get(input.id) as Row;
    return destinationFromRow(row);
  });
}
