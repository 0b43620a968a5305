/**
 * The destination writes both stores run, written once. The two schemas name every column
 * the same (rows.ts); only how a statement marks its n-th value differs: `$n` in Postgres,
 * `?n` in SQLite. Each statement goes with the values it takes, in order.
 */

import type { Keyring } from '@sluice/core';
import type { Destination } from './destination.ts';
import { DESTINATION_COLUMNS, destinationParams, UPDATABLE_COLUMNS } from './rows.ts';

/** The mark of the n-th value (from 1): `(n) => \`$${n}\`` or `(n) => \`?${n}\``. */
export type Mark = (n: number) => string;

type Value = string | number | null;

/** Inserts a destination: takes `insertValues`. */
export function insertDestinationSql(mark: Mark): string {
  return `INSERT INTO destinations (${DESTINATION_COLUMNS.join(', ')})
    VALUES (${DESTINATION_COLUMNS.map((_, i) => mark(i + 1)).join(', ')})`;
}

/**
 * Inserts a destination or, when its id is taken, brings that one to these settings, undeleted
 * (`ensureSystemDestination`): takes `insertValues`.
 */
export function upsertDestinationSql(mark: Mark): string {
  return `${insertDestinationSql(mark)}
    ON CONFLICT (id) DO UPDATE SET ${UPDATABLE_COLUMNS.map((c) => `${c} = excluded.${c}`).join(', ')},
      deleted_at = NULL`;
}

/** Writes every column a destination's owner may change: takes `updateValues`. */
export function updateDestinationSql(mark: Mark): string {
  return `UPDATE destinations SET ${UPDATABLE_COLUMNS.map((c, i) => `${c} = ${mark(i + 2)}`).join(', ')}
    WHERE id = ${mark(1)}`;
}

/** Every column's value, in `DESTINATION_COLUMNS` order, the secrets sealed with `keyring`. */
export function insertValues(d: Destination, keyring: Keyring): Value[] {
  const params = destinationParams(d, keyring);
  return DESTINATION_COLUMNS.map((c) => params[c]);
}

/** The id, then each updatable column's value. */
export function updateValues(d: Destination, keyring: Keyring): Value[] {
  const params = destinationParams(d, keyring);
  return [d.id, ...UPDATABLE_COLUMNS.map((c) => params[c])];
}
