/**
 * The operator's tenant routes (docs/api.md "Create a tenant", "A tenant's keys and its
 * deletion"), through the dashboard's one way to the server (`call` in api.ts). Admin token
 * only: a tenant's key gets `403` on every one of them.
 */

import type { CreatedKey, Page, Tenant, TenantKey, TenantWithKey } from '@sluice/client';
import { call } from './api.ts';

export type { CreatedKey, Tenant, TenantWithKey };

/**
 * Sluice's own tenant (packages/engine/src/ops/system.ts, ADR 0009): it carries the backlog
 * alerts to the operator. Fixed id; no API key signs in as it. The dashboard neither renames
 * nor deletes it, and makes it no key.
 */
const SYSTEM_TENANT_ID = 'ten_00000000000000000000000000';

export const isSystemTenant = (tenant: Pick<Tenant, 'id'>): boolean => tenant.id === SYSTEM_TENANT_ID;

const at = (id: string) => `/v1/tenants/${encodeURIComponent(id)}`;

export const tenantsApi = {
  /** One page of tenants, oldest first; `cursor` continues a previous page. */
  list: (cursor?: string) => call<Page<Tenant>>('GET', '/v1/tenants', { query: { limit: 100, cursor } }),
  get: (id: string) => call<Tenant>('GET', at(id)),
  create: (name: string) => call<TenantWithKey>('POST', '/v1/tenants', { body: { name } }),
  rename: (id: string, name: string) => call<Tenant>('PATCH', at(id), { body: { name } }),
  /** Its keys stop at once, its destinations are deleted (undelivered deliveries cancelled). */
  remove: (id: string) => call<undefined>('DELETE', at(id)),
  keys: (id: string) => call<{ data: TenantKey[] }>('GET', `${at(id)}/keys`),
  createKey: (id: string) => call<CreatedKey>('POST', `${at(id)}/keys`, { body: {} }),
  /** `409 conflict` for the tenant's last key. */
  deleteKey: (id: string, keyId: string) =>
    call<undefined>('DELETE', `${at(id)}/keys/${encodeURIComponent(keyId)}`),
};
