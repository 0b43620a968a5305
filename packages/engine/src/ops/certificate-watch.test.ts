import assert from 'node:assert/strict';
import { it } from 'node:test';
import { newId, newKeyring } from '@sluice/core';
import { newDestination } from '@sluice/store/conformance';
import { SqliteStore } from '@sluice/store-sqlite';
import { startTestPki } from '@sluice/testing';
import { noticeExpiringCertificates } from './certificate-watch.ts';

it('tells each tenant once of a client certificate within 14 days of its end, over every page', async () => {
  const pki = startTestPki();
  const store = new SqliteStore(':memory:', { keyring: newKeyring() });
  try {
    const now = Date.now();
    const tenantId = newId('ten');
    await store.createTenant({ id: tenantId, name: 'Acme', createdAt: now }, 'hash');
    const subscriber = await store.createDestination(
      newDestination(tenantId, { eventTypes: ['sluice.destination.certificate_expiring'] }),
      now,
    );
    // More than a page of destinations, the two with certificates last.
    for (let i = 0; i < 520; i++) await store.createDestination(newDestination(tenantId), now);
    const soon = pki.issue('soon', { days: 5 });
    const later = pki.issue('later', { days: 30 });
    const ending = await store.createDestination(
      newDestination(tenantId, { tls: { clientCertificate: soon.cert, clientKey: soon.key } }),
      now,
    );
    await store.createDestination(
      newDestination(tenantId, { tls: { clientCertificate: later.cert, clientKey: later.key } }),
      now,
    );
    assert.deepEqual(await noticeExpiringCertificates(store, now), [subscriber.id]);
    assert.deepEqual(await noticeExpiringCertificates(store, now + 3_600_000), [], 'once per certificate');
    const logged = await store.listEvents(
      { tenantId, type: 'sluice.destination.certificate_expiring' },
      { limit: 10 },
    );
    assert.equal(logged.items.length, 1);
    assert.equal(
      logged.items[0]?.idempotencyKey?.includes(ending.id),
      true,
      'about the destination ending soon',
    );
  } finally {
    await store.close();
    pki.close();
  }
});
