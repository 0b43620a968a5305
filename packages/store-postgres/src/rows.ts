/**
 * Row ↔ record mapping for the Postgres store: the shared mappers (`@sluice/store`), as BIGINT
 * columns arrive as numbers (db.ts) and JSONB columns already parsed.
 */

import type { Mark } from '@sluice/store';

export {
  attemptFromRow,
  deliveryFromRow,
  destinationFromRow,
  eventFromRow,
  tenantFromRow,
} from '@sluice/store';

/** The columns deliveryFromRow reads (not `seq` nor `claimed_at`). */
export const DELIVERY_COLUMNS =
  'id, event_id, destination_id, tenant_id, sequence, status, attempts, attempt_base, next_attempt_at, last_error, created_at, updated_at';

/** Postgres marks the n-th value of a statement `$n` (`@sluice/store`'s destination writes). */
export const mark: Mark = (n) => `$${n}`;

/**
 * A destination by id, deleted or not: the caller treats a row with `deleted_at` set as gone
 * (`live`). Never `AND deleted_at IS NULL` here: that predicate lets the planner answer with
 * the partial index `destinations_tenant (tenant_id, id) WHERE deleted_at IS NULL`, reading all
 * of it for the one id. A connection's generic plan (the store's named statements, db.ts) made
 * while the table is nearly empty picks that index, as it saves the filter, and keeps it as
 * the table grows: each lookup then reads every destination's entry (docs/performance.md,
 * "Postgres statements and their generic plans").
 */
export const DESTINATION_BY_ID = 'SELECT * FROM destinations WHERE id = $1';

/** The same, its row locked until the transaction ends. */
export const DESTINATION_BY_ID_FOR_UPDATE = `${DESTINATION_BY_ID} FOR UPDATE`;

/**
 * `deleted_at IS NULL` as the planner cannot see into, for a row found by its key and for a
 * page walked back along a primary key. Written plainly on `destinations`, it lets a generic
 * plan answer from the whole of `destinations_tenant`, whose predicate it is (above). And on a
 * table never analyzed the planner guesses that 0.5 % of the rows are not deleted, so a page's
 * generic plan reads the whole table and sorts it rather than walk the primary key. This form
 * matches no index's predicate, and the planner guesses half the rows, as of any boolean
 * expression it has no statistics of.
 */
export const NOT_DELETED = 'coalesce(deleted_at IS NULL, false)';

/** The row of a destination that is not deleted; undefined for none or a deleted one. */
export const live = <T extends Record<string, unknown>>(row: T | undefined): T | undefined =>
  row && row.deleted_at === null ? row : undefined;
