/** The SQLite store's tenant quotas: the operator's patch and the pending-events count. */

import {
  pendingEventsSql,
  type Tenant,
  type TenantPatch,
  tenantFromRow,
  updateTenantStatement,
} from '@sluice/store';
import type { Sql } from './lists.ts';
import { mark } from './rows.ts';

const PENDING_EVENTS = pendingEventsSql(mark);

export function updateTenant(db: Sql, id: string, patch: TenantPatch): Tenant | undefined {
  const { text, values } = updateTenantStatement(mark, id, patch);
  const r = db.sql(text).get(...values);
  return r && tenantFromRow(r);
}

export function pendingEvents(db: Sql, tenantId: string, cap: number): number {
  if (cap <= 0) return 0;
  return Number(db.sql(PENDING_EVENTS).get(tenantId, cap)?.n ?? 0);
}
