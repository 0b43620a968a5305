/**
 * The Postgres store's tenants: created, read, patched and deleted by the operator, their keys,
 * their pending-events count and their event log. A deleted tenant is kept (its events and
 * deliveries point at it) with `deleted_at` set, and is found by no read here.
 */

import { sqlSourcesOf } from '@sluice/core';
import {
  type EventFilter,
  eventsStatement,
  firstKeyId,
  insertKeySql,
  insertTenantSql,
  type KeyDeletion,
  type KeyMatch,
  keyFromRow,
  keyMatchFromRow,
  keyMatchSql,
  type LoggedEvent,
  listKeysSql,
  loggedEventFromRow,
  type NewTenant,
  type NewTenantKey,
  type Page,
  type PageRequest,
  type PerTurn,
  pageOf,
  pendingEventsSql,
  perTurn,
  TENANT_COLUMNS,
  type Tenant,
  type TenantKey,
  type TenantPatch,
  tenantFromRow,
  touchKeySql,
  updateTenantStatement,
} from '@sluice/store';
import type { Db, Queryable } from './db.ts';
import { PORTAL_LINK_SQL } from './portal-links.ts';
import { mark, NOT_DELETED } from './rows.ts';

const INSERT_TENANT = insertTenantSql(mark);
const INSERT_KEY = insertKeySql(mark);
/**
 * Each key's tenant is read by its primary key, one probe a key. As a join, a connection's
 * generic plan made while `tenants` was nearly empty hashes the whole table (a sequential
 * scan) for every lookup, so for every API request; the LIMIT keeps the subquery from being
 * flattened into such a join.
 */
const KEYS_BY_HASH = keyMatchSql(
  'k.key_hash = ANY($1)',
  'CROSS JOIN LATERAL (SELECT * FROM tenants WHERE id = k.tenant_id LIMIT 1) t',
);
const LIST_KEYS = listKeysSql(mark);
const TOUCH_KEY = touchKeySql(mark);
const PENDING_EVENTS = pendingEventsSql(mark);

/**
 * Soft-deletes the destinations matching `where` (on `$1`; `$2` is now), which must leave the
 * deleted ones out, and cancels their undelivered deliveries, in one statement; answers the
 * deleted ids. A destination's deletion and a tenant's run it.
 */
function deleteDestinationsSql(where: string): string {
  return `WITH gone AS (
       UPDATE destinations SET deleted_at = $2, updated_at = $2 WHERE ${where}
       RETURNING id
     ), cancelled AS (
       UPDATE deliveries SET status = 'cancelled', updated_at = $2, claimed_at = NULL
       WHERE destination_id IN (SELECT id FROM gone)
         AND status IN (${sqlSourcesOf('cancel')})
     )
     SELECT id FROM gone ORDER BY id`;
}

/**
 * A destination's deletion (the store's `deleteDestination`): by its primary key, whatever the
 * connection's plan was made on (`NOT_DELETED`, rows.ts).
 */
export const DELETE_DESTINATION = deleteDestinationsSql(`id = $1 AND ${NOT_DELETED}`);
/** A tenant's: its live destinations are the entries of `destinations_tenant` under its id. */
const DELETE_TENANT_DESTINATIONS = deleteDestinationsSql('tenant_id = $1 AND deleted_at IS NULL');

export async function createTenant(
  db: Db,
  tenant: NewTenant,
  apiKeyHash: string,
  key?: Omit<NewTenantKey, 'hash'>,
): Promise<void> {
  await db.tx(async (q) => {
    await q.query(INSERT_TENANT, [
      tenant.id,
      tenant.name,
      apiKeyHash,
      tenant.createdAt,
      tenant.quota?.eventsPerSecond ?? null,
      tenant.quota?.pendingEvents ?? null,
    ]);
    const id = key?.id ?? firstKeyId(tenant.id);
    await q.query(INSERT_KEY, [id, tenant.id, apiKeyHash, key?.prefix ?? null, tenant.createdAt]);
  });
}

export async function getTenant(db: Queryable, id: string): Promise<Tenant | undefined> {
  const [r] = await db.query(`SELECT ${TENANT_COLUMNS} FROM tenants WHERE id = $1 AND deleted_at IS NULL`, [
    id,
  ]);
  return r && tenantFromRow(r);
}

/**
 * The key lookups of one turn of the event loop in one statement (`perTurn`, as the accepts):
 * every API request reads its key (auth.ts), so under load the requests that arrive together
 * share one round trip.
 */
export function keyLookups(db: Queryable, max = 500): PerTurn<string, KeyMatch | null> {
  return perTurn(async (hashes) => {
    const rows = await db.query(KEYS_BY_HASH, [hashes]);
    const byHash = new Map(rows.map((r) => [String(r.key_hash), keyMatchFromRow(r)]));
    return hashes.map((hash) => byHash.get(hash) ?? null);
  }, max);
}

export async function addTenantKey(
  db: Queryable,
  tenantId: string,
  key: NewTenantKey,
  now: number,
): Promise<TenantKey | undefined> {
  // Added only to a tenant not deleted. A key added while the tenant's deletion commits is
  // harmless: keyByHash reads keys of tenants not deleted only.
  const rows = await db.query(
    `INSERT INTO tenant_keys (id, tenant_id, key_hash, prefix, created_at)
     SELECT $1, id, $3, $4, $5 FROM tenants WHERE id = $2 AND deleted_at IS NULL
     RETURNING id`,
    [key.id, tenantId, key.hash, key.prefix, now],
  );
  if (rows.length === 0) return undefined;
  return { id: key.id, tenantId, prefix: key.prefix, createdAt: now, lastUsedAt: null };
}

export async function listTenantKeys(db: Queryable, tenantId: string): Promise<TenantKey[]> {
  return (await db.query(LIST_KEYS, [tenantId])).map(keyFromRow);
}

export async function deleteTenantKey(db: Db, tenantId: string, keyId: string): Promise<KeyDeletion> {
  return db.tx(async (q) => {
    // The tenant's keys locked: two deletes of its last two keys take turns, and the second sees one left.
    const keys = await q.query('SELECT id FROM tenant_keys WHERE tenant_id = $1 ORDER BY id FOR UPDATE', [
      tenantId,
    ]);
    if (!keys.some((k) => k.id === keyId)) return 'not_found';
    if (keys.length === 1) return 'last';
    await q.query('DELETE FROM tenant_keys WHERE id = $1', [keyId]);
    return 'deleted';
  });
}

export async function touchTenantKey(db: Queryable, keyId: string, now: number): Promise<void> {
  await db.query(TOUCH_KEY, [now, keyId]);
}

export async function deleteTenant(db: Db, id: string, now: number): Promise<string[] | undefined> {
  return db.tx(async (q) => {
    const gone = await q.query(
      'UPDATE tenants SET deleted_at = $2 WHERE id = $1 AND deleted_at IS NULL RETURNING id',
      [id, now],
    );
    if (gone.length === 0) return undefined;
    await q.query('DELETE FROM tenant_keys WHERE tenant_id = $1', [id]);
    await q.query(PORTAL_LINK_SQL.deleteOfTenant, [id]);
    // As deleteDestination, for all the tenant's destinations at once.
    const rows = await q.query(DELETE_TENANT_DESTINATIONS, [id, now]);
    return rows.map((r) => String(r.id));
  });
}

export async function listEvents(
  db: Queryable,
  filter: EventFilter,
  req: PageRequest,
): Promise<Page<LoggedEvent>> {
  const { text, values } = eventsStatement(mark, filter, req);
  return pageOf(await db.query(text, values), req.limit, loggedEventFromRow);
}

export async function updateTenant(
  db: Queryable,
  id: string,
  patch: TenantPatch,
): Promise<Tenant | undefined> {
  const { text, values } = updateTenantStatement(mark, id, patch);
  const [r] = await db.query(text, values);
  return r && tenantFromRow(r);
}

export async function pendingEvents(db: Queryable, tenantId: string, cap: number): Promise<number> {
  if (cap <= 0) return 0;
  const [r] = await db.query(PENDING_EVENTS, [tenantId, cap]);
  return Number(r?.n ?? 0);
}
