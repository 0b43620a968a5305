/**
 * Row ↔ record mapping for the Postgres store: the shared mappers (`@sluice/store`) — BIGINT
 * columns arrive as numbers (db.ts) and JSONB columns already parsed — plus tenants and events.
 */

import type { StoredEvent, Tenant } from '@sluice/store';
import type { Row } from './db.ts';

export {
  attemptFromRow,
  DESTINATION_COLUMNS,
  type DestinationColumn,
  deliveryFromRow,
  destinationFromRow,
  destinationParams,
} from '@sluice/store';

const str = (v: unknown): string => v as string;
const num = (v: unknown): number => v as number;
const nullableStr = (v: unknown): string | null => (v === null ? null : (v as string));

export function tenantFromRow(r: Row): Tenant {
  return { id: str(r.id), name: str(r.name), createdAt: num(r.created_at) };
}

export function eventFromRow(r: Row): StoredEvent {
  return {
    id: str(r.id),
    tenantId: str(r.tenant_id),
    type: str(r.type),
    payload: str(r.payload),
    idempotencyKey: nullableStr(r.idempotency_key),
    createdAt: num(r.created_at),
  };
}

/** The columns deliveryFromRow reads (not `seq` nor `claimed_at`). */
export const DELIVERY_COLUMNS =
  'id, event_id, destination_id, tenant_id, sequence, status, attempts, attempt_base, next_attempt_at, last_error, created_at, updated_at';
