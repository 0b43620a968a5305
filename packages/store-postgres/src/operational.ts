/**
 * Operational events on Postgres (`@sluice/store` operational.ts): each notice accepted as an
 * event of its tenant, to the destinations that subscribe to its type, with the caller's
 * queryable (inside its transaction: a completion batch, an alert's change).
 */

import { type OperationalNotice, operationalEvent, type Subscriber, subscribersSql } from '@sluice/store';
import { acceptEvents } from './accept.ts';
import type { Queryable } from './db.ts';
import { mark } from './rows.ts';

const SUBSCRIBERS = subscribersSql(mark);

/** Accepts the notices; returns the destinations given deliveries (a repeated key gives none). */
export async function emitNotices(
  q: Queryable,
  notices: readonly OperationalNotice[],
  now: number,
): Promise<string[]> {
  const woken = new Set<string>();
  const byTenant = new Map<string, OperationalNotice[]>();
  for (const n of notices) byTenant.set(n.tenantId, [...(byTenant.get(n.tenantId) ?? []), n]);
  for (const [tenantId, list] of byTenant) {
    const subscribers: Subscriber[] = (await q.query(SUBSCRIBERS, [tenantId])).map((r) => ({
      id: r.id as string,
      eventTypes: r.event_types as string[],
    }));
    const results = await acceptEvents(
      q,
      tenantId,
      list.map((n) => operationalEvent(n, subscribers)),
      now,
    );
    for (const r of results) if (!r.replayed) for (const d of r.event.deliveries) woken.add(d.destinationId);
  }
  return [...woken];
}
