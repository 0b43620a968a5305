/** The Postgres store's tenants: created, read, patched by the operator, and their pending-events count. */

import {
  insertTenantSql,
  type NewTenant,
  pendingEventsSql,
  TENANT_COLUMNS,
  type Tenant,
  type TenantPatch,
  tenantFromRow,
  updateTenantStatement,
} from '@sluice/store';
import type { Queryable } from './db.ts';
import { mark } from './rows.ts';

const INSERT_TENANT = insertTenantSql(mark);
const PENDING_EVENTS = pendingEventsSql(mark);

export async function createTenant(db: Queryable, tenant: NewTenant, apiKeyHash: string): Promise<void> {
  await db.query(INSERT_TENANT, [
    tenant.id,
    tenant.name,
    apiKeyHash,
    tenant.createdAt,
    tenant.quota?.eventsPerSecond ?? null,
    tenant.quota?.pendingEvents ?? null,
  ]);
}

export async function tenantWhere(db: Queryable, column: 'id' | 'api_key_hash', value: string) {
  const [r] = await db.query(`SELECT ${TENANT_COLUMNS} FROM tenants WHERE ${column} = $1`, [value]);
  return r && tenantFromRow(r);
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
