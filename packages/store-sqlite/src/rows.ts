/**
 * Row ↔ record mapping for the SQLite store: the shared mappers (`@sluice/engine`), with
 * JSON columns stored as text.
 */

import { destinationDecoder } from '@sluice/engine';

export { attemptFromRow, deliveryFromRow, destinationParams } from '@sluice/engine';

export const destinationFromRow = destinationDecoder((v) => JSON.parse(v as string));
