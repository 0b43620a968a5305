/**
 * The Store conformance suite (CONTRIBUTING.md: one suite, every implementation; Outpost's drivertest).
 * It speaks only the `Store` interface, so the SQLite store and the Postgres store run it
 * unchanged:
 *
 *   storeConformance('SqliteStore', async () => ({ store, cleanup }));
 *
 * `open` returns a fresh, empty, migrated store per test; `cleanup` releases it and must
 * accept a store the test has already closed. One file per topic; `fixtures.ts` holds what
 * they share, and the records other suites make too (`newDestination`, `claimedDelivery`).
 */

import { describe } from 'node:test';
import { acceptCases } from './accept.ts';
import { alertConformance } from './alerts.ts';
import { claimCases } from './claim.ts';
import { countCases } from './counts.ts';
import { destinationCases } from './destinations.ts';
import { diskFullCases } from './disk-full.ts';
import { eventTypeCases } from './event-types.ts';
import type { OpenStore } from './fixtures.ts';
import { healthConformance } from './health.ts';
import { lifecycleCases } from './lifecycle.ts';
import { listingCases } from './listings.ts';
import { operationalCases } from './operational.ts';
import { orderingConformance } from './ordering.ts';
import { portalLinkCases } from './portal-links.ts';
import { retentionCases } from './retention.ts';
import { secretCases } from './secrets.ts';
import { tenantCases } from './tenants.ts';
import { workCases } from './work.ts';

export { claimedDelivery, newDestination, type OpenStore } from './fixtures.ts';

export function storeConformance(name: string, open: OpenStore): void {
  healthConformance(name, open);
  describe(name, () => {
    alertConformance(open);
    destinationCases(open);
    secretCases(open);
    acceptCases(open);
    claimCases(open);
    workCases(open);
    countCases(open);
    listingCases(open);
    lifecycleCases(open);
    retentionCases(open);
    orderingConformance(open);
    tenantCases(open);
    eventTypeCases(open);
    portalLinkCases(open);
    operationalCases(open);
    diskFullCases(open);
  });
}
