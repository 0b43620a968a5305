/**
 * Backlog alerts on Postgres (ADR 0009): the backlog read of every destination in one
 * statement, and the alert state that any number of rate-limiter replicas share.
 *
 * Every replica evaluates; the primary key of `backlog_alerts` decides. A raise inserts with
 * `ON CONFLICT DO NOTHING` (a concurrent raise waits on the key, then does nothing), and a
 * resolve deletes the row it read, matched by its `raised_at` (a concurrent resolve waits on
 * the row lock, then finds nothing). Whoever wins accepts the alert's event in the same
 * transaction, so the operator hears of each change exactly once.
 */

import type { BacklogSample, FiringAlert, Keyring } from '@sluice/core';
import {
  type AlertNotice,
  alertFromRow,
  backlogSampleFromRow,
  type Destination,
  destinationFromRow,
  insertValues,
  type NewDestination,
  type NewTenant,
  newDestinationRecord,
  type OperationalNotice,
  upsertDestinationSql,
} from '@sluice/store';
import { acceptEvents } from './accept.ts';
import type { Db, Queryable, Row } from './db.ts';
import { emitNotices } from './operational.ts';
import { PENDING_DESTINATION, WITH_PENDING } from './pending.ts';
import { mark } from './rows.ts';

/**
 * $1 the cap, $2 the tenant left out. Per destination: its pending deliveries counted up to
 * $1 (a LIMIT inside the count, on `deliveries_due`) and the earliest due one (one probe).
 */
const BACKLOG_SAMPLES = `
  ${WITH_PENDING}
  SELECT t.id AS destination_id, t.tenant_id, c.n AS pending, o.at AS oldest
  FROM pending p ${PENDING_DESTINATION}
  CROSS JOIN LATERAL (
    SELECT count(*) AS n FROM (
      SELECT 1 FROM deliveries d WHERE d.destination_id = t.id AND d.status = 'pending' LIMIT $1) x) c
  LEFT JOIN LATERAL (
    SELECT d.next_attempt_at AS at FROM deliveries d
    WHERE d.destination_id = t.id AND d.status = 'pending'
    ORDER BY d.next_attempt_at LIMIT 1) o ON true
  WHERE t.deleted_at IS NULL AND t.tenant_id <> $2 AND c.n > 0`;

export async function backlogSamples(
  db: Queryable,
  cap: number,
  exceptTenantId: string,
): Promise<BacklogSample[]> {
  const rows = await db.query(BACKLOG_SAMPLES, [Math.max(1, cap), exceptTenantId]);
  return rows.map(backlogSampleFromRow);
}

export async function listAlerts(db: Queryable, tenantId: string | undefined): Promise<FiringAlert[]> {
  const rows =
    tenantId === undefined
      ? await db.query('SELECT * FROM backlog_alerts ORDER BY destination_id, kind', [])
      : await db.query('SELECT * FROM backlog_alerts WHERE tenant_id = $1 ORDER BY destination_id, kind', [
          tenantId,
        ]);
  return rows.map(alertFromRow);
}

/**
 * The write of each change: a raise inserts unless an alert of its destination and kind is
 * firing; a resolve deletes the one raised at `raisedAt`. Each returns the row it changed.
 */
const WRITES = {
  raise: (a: FiringAlert): [string, unknown[]] => [
    `INSERT INTO backlog_alerts (destination_id, kind, tenant_id, threshold, value, raised_at)
     VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT DO NOTHING RETURNING 1`,
    [a.destinationId, a.kind, a.tenantId, a.threshold, a.value, a.raisedAt],
  ],
  resolve: (a: FiringAlert): [string, unknown[]] => [
    'DELETE FROM backlog_alerts WHERE destination_id = $1 AND kind = $2 AND raised_at = $3 RETURNING 1',
    [a.destinationId, a.kind, a.raisedAt],
  ],
};

/**
 * Raises or resolves the alert in a transaction; when the write changed its row (this caller
 * won), accepts the notice's event in the same transaction, and the tenant's operational
 * event (`sluice.backlog.…`) with it.
 */
export async function changeAlert(
  db: Db,
  change: keyof typeof WRITES,
  alert: FiringAlert,
  notice: AlertNotice | null,
  now: number,
  operational?: OperationalNotice,
): Promise<boolean> {
  return db.tx(async (q) => {
    const changed = await q.query(...WRITES[change](alert));
    if (changed.length === 0) return false;
    if (notice !== null) await acceptEvents(q, notice.tenantId, [notice.event], now);
    if (operational !== undefined) await emitNotices(q, [operational], now);
    return true;
  });
}

const UPSERT_DESTINATION = `${upsertDestinationSql(mark)} RETURNING *`;

/** Replicas starting together all run it: both statements are upserts, safe side by side. */
export async function ensureSystemDestination(
  db: Db,
  keyring: Keyring,
  tenant: NewTenant,
  input: NewDestination,
  now: number,
): Promise<Destination> {
  return db.tx(async (q) => {
    await q.query(
      `INSERT INTO tenants (id, name, api_key_hash, created_at) VALUES ($1, $2, $3, $4)
       ON CONFLICT DO NOTHING`,
      [tenant.id, tenant.name, `none:${tenant.id}`, tenant.createdAt],
    );
    const [row] = await q.query(UPSERT_DESTINATION, insertValues(newDestinationRecord(input, now), keyring));
    return destinationFromRow(row as Row, keyring);
  });
}
