/**
 * Row ↔ record mapping for the SQLite store: the shared mappers (`@sluice/store`), with
 * JSON columns stored as text.
 */

import { destinationDecoder, type Mark } from '@sluice/store';

export { attemptFromRow, deliveryFromRow } from '@sluice/store';

export const destinationFromRow = destinationDecoder((v) => JSON.parse(v as string));

/** SQLite marks the n-th value of a statement `?n` (`@sluice/store`'s destination writes). */
export const mark: Mark = (n) => `?${n}`;
