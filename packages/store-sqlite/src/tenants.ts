/**
 * The SQLite store's tenants: created, read, patched and deleted by the operator (their keys
 * and portal links go with them), their keys, their pending-events count and their event log. A deleted tenant is kept (its events and
 * deliveries point at it) with `deleted_at` set, and is found by no read here.
 */

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
  pageOf,
  pendingEventsSql,
  TENANT_COLUMNS,
  type Tenant,
  type TenantKey,
  type TenantPatch,
  tenantFromRow,
  touchKeySql,
  updateTenantStatement,
} from '@sluice/store';
import { deleteDestinationIn } from './destinations.ts';
import type { Sql } from './lists.ts';
import { deleteTenantLinks } from './portal-links.ts';
import { mark } from './rows.ts';

const PENDING_EVENTS = pendingEventsSql(mark);
const INSERT_TENANT = insertTenantSql(mark);
const INSERT_KEY = insertKeySql(mark);
const KEY_BY_HASH = keyMatchSql('k.key_hash = ?1');
const LIST_KEYS = listKeysSql(mark);
const TOUCH_KEY = touchKeySql(mark);
const LIVE_TENANT = `SELECT ${TENANT_COLUMNS} FROM tenants WHERE id = ? AND deleted_at IS NULL`;

export function createTenant(
  db: Sql,
  tenant: NewTenant,
  apiKeyHash: string,
  key?: Omit<NewTenantKey, 'hash'>,
): void {
  db.tx(() => {
    db.sql(INSERT_TENANT).run(
      tenant.id,
      tenant.name,
      apiKeyHash,
      tenant.createdAt,
      tenant.quota?.eventsPerSecond ?? null,
      tenant.quota?.pendingEvents ?? null,
    );
    const id = key?.id ?? firstKeyId(tenant.id);
    db.sql(INSERT_KEY).run(id, tenant.id, apiKeyHash, key?.prefix ?? null, tenant.createdAt);
  });
}

export function getTenant(db: Sql, id: string): Tenant | undefined {
  const r = db.sql(LIVE_TENANT).get(id);
  return r && tenantFromRow(r);
}

export function keyByHash(db: Sql, hash: string): KeyMatch | undefined {
  const r = db.sql(KEY_BY_HASH).get(hash);
  return r && keyMatchFromRow(r);
}

export function addTenantKey(
  db: Sql,
  tenantId: string,
  key: NewTenantKey,
  now: number,
): TenantKey | undefined {
  return db.tx(() => {
    if (db.sql(LIVE_TENANT).get(tenantId) === undefined) return undefined;
    db.sql(INSERT_KEY).run(key.id, tenantId, key.hash, key.prefix, now);
    return { id: key.id, tenantId, prefix: key.prefix, createdAt: now, lastUsedAt: null };
  });
}

export function listTenantKeys(db: Sql, tenantId: string): TenantKey[] {
  return db.sql(LIST_KEYS).all(tenantId).map(keyFromRow);
}

export function deleteTenantKey(db: Sql, tenantId: string, keyId: string): KeyDeletion {
  return db.tx(() => {
    const keys = db.sql('SELECT id FROM tenant_keys WHERE tenant_id = ?').all(tenantId);
    if (!keys.some((k) => k.id === keyId)) return 'not_found';
    if (keys.length === 1) return 'last';
    db.sql('DELETE FROM tenant_keys WHERE id = ?').run(keyId);
    return 'deleted';
  });
}

export function touchTenantKey(db: Sql, keyId: string, now: number): void {
  db.sql(TOUCH_KEY).run(now, keyId);
}

export function deleteTenant(db: Sql, id: string, now: number): string[] | undefined {
  return db.tx(() => {
    const { changes } = db
      .sql('UPDATE tenants SET deleted_at = ? WHERE id = ? AND deleted_at IS NULL')
      .run(now, id);
    if (changes === 0) return undefined;
    db.sql('DELETE FROM tenant_keys WHERE tenant_id = ?').run(id);
    deleteTenantLinks(db, id);
    const ids = db
      .sql('SELECT id FROM destinations WHERE tenant_id = ? AND deleted_at IS NULL ORDER BY id')
      .all(id)
      .map((r) => String(r.id));
    for (const destinationId of ids) deleteDestinationIn(db, destinationId, now);
    return ids;
  });
}

export function listEvents(db: Sql, filter: EventFilter, req: PageRequest): Page<LoggedEvent> {
  const { text, values } = eventsStatement(mark, filter, req);
  return pageOf(db.sql(text).all(...values), req.limit, loggedEventFromRow);
}

export function updateTenant(db: Sql, id: string, patch: TenantPatch): Tenant | undefined {
  const { text, values } = updateTenantStatement(mark, id, patch);
  const r = db.sql(text).get(...values);
  return r && tenantFromRow(r);
}

export function pendingEvents(db: Sql, tenantId: string, cap: number): number {
  if (cap <= 0) return 0;
  return Number(db.sql(PENDING_EVENTS).get(tenantId, cap)?.n ?? 0);
}
