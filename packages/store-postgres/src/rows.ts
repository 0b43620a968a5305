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
