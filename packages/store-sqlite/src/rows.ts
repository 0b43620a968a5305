/**
 * Row ↔ record mapping for the SQLite store: the shared mappers (`@sluice/store`), with
 * JSON columns stored as text.
 */

import { destinationDecoder } from '@sluice/store';

export { attemptFromRow, deliveryFromRow, destinationParams } from '@sluice/store';

export const destinationFromRow = destinationDecoder((v) => JSON.parse(v as string));
