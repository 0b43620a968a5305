/**
 * Client certificates near their end (docs/api.md "Mutual TLS"): every hour, in each process
 * that runs the backlog alerter, the destinations are read page by page and each whose client
 * certificate ends in less than 14 days is told to its tenant as
 * `sluice.destination.certificate_expiring` (and at once by the API when a destination is given
 * such a certificate). The notice's key names the certificate
 * (`emitOperational` accepts a key once), so of many replicas and many checks one event goes
 * out per certificate; a new certificate is a new key.
 */

import { CERTIFICATE_WARNING_MS, clientCertificateEnd, presentTls } from '@sluice/core';
import type { Destination, OperationalNotice, Store } from '@sluice/store';

/** How often the destinations are read for certificates near their end. */
export const CERTIFICATE_CHECK_MS = 3_600_000;
const PAGE = 500;
const DAY_MS = 86_400_000;

/** The notice of `d`'s client certificate if it ends in less than 14 days (undefined otherwise). */
export function certificateNotice(d: Destination, now: number): OperationalNotice | undefined {
  const end = clientCertificateEnd(d.tls);
  const shown = presentTls(d.tls)?.clientCertificate;
  if (end === undefined || shown === undefined || end - now >= CERTIFICATE_WARNING_MS) return undefined;
  return {
    tenantId: d.tenantId,
    destinationId: d.id,
    type: 'sluice.destination.certificate_expiring',
    occurredAt: now,
    data: {
      subject: shown.subject,
      notAfter: shown.notAfter,
      fingerprint256: shown.fingerprint256,
      daysLeft: Math.max(0, Math.floor((end - now) / DAY_MS)),
    },
    key: `certificate_expiring:${d.id}:${shown.fingerprint256}`,
  };
}

/** Tells each tenant of its certificates near their end; returns the destinations given deliveries. */
export async function noticeExpiringCertificates(
  store: Pick<Store, 'pageDestinations' | 'emitOperational'>,
  now: number,
): Promise<string[]> {
  const notices: OperationalNotice[] = [];
  let after: string | undefined;
  for (;;) {
    const page = await store.pageDestinations(undefined, { limit: PAGE, after });
    for (const d of page.items) {
      const notice = certificateNotice(d, now);
      if (notice !== undefined) notices.push(notice);
    }
    if (page.next === null) break;
    after = page.next;
  }
  return notices.length === 0 ? [] : store.emitOperational(notices, now);
}
