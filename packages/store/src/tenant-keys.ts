/**
 * A tenant's API keys and its event log, as both stores read and write them (migration 0009):
 * the records, and the statements written once with the store's parameter marks (`Mark`).
 *
 * A key is stored as its SHA-256 hash (auth.ts says why that is enough) with a short prefix
 * of the key, shown in listings so an operator can tell keys apart; keys made before 0009 came
 * from `tenants.api_key_hash` and have no prefix. `tenants.api_key_hash` is no longer read.
 */

import type { StoredEvent } from './delivery.ts';
import type { Tenant } from './destination.ts';
import type { Mark } from './destination-sql.ts';
import { type Condition, type PageRequest, pageStatement } from './page.ts';
import { type Row, TENANT_COLUMNS, tenantFromRow } from './rows.ts';

export interface TenantKey {
  id: string;
  tenantId: string;
  /** The key's first characters (`sk_` and 8 more); null for a key made before they were kept. */
  prefix: string | null;
  createdAt: number;
  /** When a request last used it, written at most about once a minute (auth.ts); null: never. */
  lastUsedAt: number | null;
}

/** A key to add: its id, the hash looked up, the prefix shown. */
export interface NewTenantKey {
  id: string;
  hash: string;
  prefix: string | null;
}

/** The key a request presented, and its tenant (not deleted). */
export interface KeyMatch {
  tenant: Tenant;
  keyId: string;
  lastUsedAt: number | null;
}

/** How a key's deletion went: the last key of a tenant stays (a tenant keeps one). */
export type KeyDeletion = 'deleted' | 'not_found' | 'last';

const nullableNum = (v: unknown): number | null => (v === null || v === undefined ? null : Number(v));

/** The key id of a tenant's first key when none is given: `key_` and the tenant id's ULID. */
export const firstKeyId = (tenantId: string): string => `key_${tenantId.slice(tenantId.indexOf('_') + 1)}`;

/** Values: id, tenant id, key hash, prefix, created at. */
export function insertKeySql(mark: Mark): string {
  return `INSERT INTO tenant_keys (id, tenant_id, key_hash, prefix, created_at)
    VALUES (${[1, 2, 3, 4, 5].map(mark).join(', ')})`;
}

/**
 * Keys and their tenants (not deleted) whose hash meets `condition` (the store's text, never
 * input: `k.key_hash = ?1`, or `k.key_hash = ANY($1)` for a turn's requests together): probes
 * of `tenant_keys`' unique hash index. `tenant` brings each key's tenant in as `t` (a store's
 * text too; by default a join on its primary key). Read with `keyMatchFromRow`.
 */
export function keyMatchSql(condition: string, tenant = 'JOIN tenants t ON t.id = k.tenant_id'): string {
  const columns = TENANT_COLUMNS.split(', ')
    .map((c) => `t.${c}`)
    .join(', ');
  return `SELECT ${columns}, k.key_hash, k.id AS key_id, k.last_used_at AS key_last_used_at
    FROM tenant_keys k ${tenant}
    WHERE ${condition} AND t.deleted_at IS NULL`;
}

export function keyMatchFromRow(r: Row): KeyMatch {
  return { tenant: tenantFromRow(r), keyId: String(r.key_id), lastUsedAt: nullableNum(r.key_last_used_at) };
}

const KEY_COLUMNS = 'id, tenant_id, prefix, created_at, last_used_at';

/** A tenant's keys, oldest first. Value: the tenant id. */
export function listKeysSql(mark: Mark): string {
  return `SELECT ${KEY_COLUMNS} FROM tenant_keys WHERE tenant_id = ${mark(1)} ORDER BY id`;
}

/** Values: now, the key id; a no-op when the key is gone. */
export function touchKeySql(mark: Mark): string {
  return `UPDATE tenant_keys SET last_used_at = ${mark(1)} WHERE id = ${mark(2)}`;
}

export function keyFromRow(r: Row): TenantKey {
  return {
    id: String(r.id),
    tenantId: String(r.tenant_id),
    prefix: r.prefix === null || r.prefix === undefined ? null : String(r.prefix),
    createdAt: Number(r.created_at),
    lastUsedAt: nullableNum(r.last_used_at),
  };
}

/**
 * An event as the event log lists it (`Store.listEvents`): without its payload, which a page
 * never reads (`getEvent` has it), but with the payload's size.
 */
export interface LoggedEvent extends Omit<StoredEvent, 'payload'> {
  /** The payload's bytes as stored: the JSON a destination receives, UTF-8. */
  payloadBytes: number;
}

/**
 * The columns of a `LoggedEvent`. `octet_length` of a TEXT value is read from its header in
 * both engines (SQLite's record header, Postgres's TOAST pointer), never from the text: a
 * page costs the same whatever its payloads weigh.
 */
const LOGGED_EVENT_COLUMNS =
  'id, tenant_id, type, idempotency_key, created_at, octet_length(payload) AS payload_bytes';

export function loggedEventFromRow(r: Row): LoggedEvent {
  return {
    id: String(r.id),
    tenantId: String(r.tenant_id),
    type: String(r.type),
    idempotencyKey:
      r.idempotency_key === null || r.idempotency_key === undefined ? null : String(r.idempotency_key),
    createdAt: Number(r.created_at),
    payloadBytes: Number(r.payload_bytes),
  };
}

/** The event log's filter (`Store.listEvents`). */
export interface EventFilter {
  tenantId: string;
  /** An exact type, or `prefix.*`: every type that starts with `prefix.`. */
  type?: string | undefined;
  /** Only events with a delivery to this destination. */
  destinationId?: string | undefined;
  /** Only events with a delivery to one of these (a portal link narrowed to them); never empty. */
  destinationIds?: readonly string[] | undefined;
  /** Accepted at or after this time. */
  since?: number | undefined;
  /** Accepted at or before this time. */
  until?: number | undefined;
}

/**
 * A page of the tenant's events, newest first (`pageStatement`; read with `pageOf`), walked
 * backwards along the index `events_tenant` (tenant_id, id) of migration 0009. A `prefix.*`
 * type compares the type's first characters with `prefix.` (no LIKE, so `_` and `%` in a type
 * are plain characters).
 */
export function eventsStatement(
  mark: Mark,
  filter: EventFilter,
  req: PageRequest,
): { text: string; values: (string | number)[] } {
  const conditions: Condition[] = [['tenant_id', filter.tenantId]];
  const type = filter.type;
  if (type?.endsWith('.*')) {
    const prefix = type.slice(0, -1);
    conditions.push([`substr(type, 1, ${prefix.length})`, prefix]);
  } else if (type !== undefined) conditions.push(['type', type]);
  if (filter.since !== undefined) conditions.push(['created_at', filter.since, '>=']);
  if (filter.until !== undefined) conditions.push(['created_at', filter.until, '<=']);
  if (filter.destinationId !== undefined) {
    conditions.push(['id', filter.destinationId, 'IN deliveries']);
  }
  if (filter.destinationIds !== undefined) conditions.push(['id', filter.destinationIds, 'IN deliveries']);
  return pageStatement(mark, 'events', LOGGED_EVENT_COLUMNS, [], conditions, req);
}
