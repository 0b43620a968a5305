/**
 * The statements of tenants that both stores run, written once with the store's parameter
 * marks (`Mark`, as destination-sql.ts).
 */

import type { TenantPatch } from './destination.ts';
import type { Mark } from './destination-sql.ts';
import { TENANT_COLUMNS } from './rows.ts';

/** The columns a patch sets, with their values: only the fields it names. */
function tenantSets(patch: TenantPatch): [string, string | number | null][] {
  const sets: [string, string | number | null][] = [];
  if (patch.name !== undefined) sets.push(['name', patch.name]);
  if (patch.quota?.eventsPerSecond !== undefined)
    sets.push(['quota_events_per_second', patch.quota.eventsPerSecond]);
  if (patch.quota?.pendingEvents !== undefined)
    sets.push(['quota_pending_events', patch.quota.pendingEvents]);
  return sets;
}

/** `UPDATE … RETURNING` the tenant (an empty patch sets its id to itself): text and values. */
export function updateTenantStatement(
  mark: Mark,
  id: string,
  patch: TenantPatch,
): { text: string; values: (string | number | null)[] } {
  const sets = tenantSets(patch);
  if (sets.length === 0) sets.push(['id', id]);
  const text = `UPDATE tenants SET ${sets.map(([column], i) => `${column} = ${mark(i + 1)}`).join(', ')}
    WHERE id = ${mark(sets.length + 1)} AND deleted_at IS NULL RETURNING ${TENANT_COLUMNS}`;
  return { text, values: [...sets.map(([, value]) => value), id] };
}

/**
 * The tenant's unfinished events, up to a cap: at most `cap` distinct events read from the
 * index `deliveries_unfinished_tenant` (migration 0008). Values: the tenant id, the cap.
 */
export function pendingEventsSql(mark: Mark): string {
  return `SELECT count(*) AS n FROM (
    SELECT DISTINCT event_id FROM deliveries
    WHERE tenant_id = ${mark(1)} AND status IN ('pending', 'queued', 'delivering')
    LIMIT ${mark(2)}) AS unfinished`;
}

/** Creates a tenant with its quotas: values are id, name, key hash, created at, the two quotas. */
export function insertTenantSql(mark: Mark): string {
  return `INSERT INTO tenants (id, name, api_key_hash, created_at, quota_events_per_second, quota_pending_events)
    VALUES (${[1, 2, 3, 4, 5, 6].map(mark).join(', ')})`;
}
