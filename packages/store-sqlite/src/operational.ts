/**
 * Operational events on SQLite (`@sluice/store` operational.ts): each notice accepted as an
 * event of its tenant, to the destinations that subscribe to its type. Runs inside the
 * caller's transaction (a completion batch, an alert's change) or its own.
 */

import { type OperationalNotice, operationalEvent, type Subscriber, subscribersSql } from '@sluice/store';
import { acceptOne } from './accept.ts';
import type { Sql } from './lists.ts';
import { mark } from './rows.ts';

const SUBSCRIBERS = subscribersSql(mark);

/** Accepts the notices; returns the destinations given deliveries (a repeated key gives none). */
export function emitNotices(
  db: Pick<Sql, 'sql'>,
  notices: readonly OperationalNotice[],
  now: number,
): string[] {
  const woken = new Set<string>();
  const subscribers = new Map<string, Subscriber[]>();
  for (const notice of notices) {
    let list = subscribers.get(notice.tenantId);
    if (list === undefined) {
      list = db
        .sql(SUBSCRIBERS)
        .all(notice.tenantId)
        .map((r) => ({ id: r.id as string, eventTypes: JSON.parse(r.event_types as string) as string[] }));
      subscribers.set(notice.tenantId, list);
    }
    const result = acceptOne(db, notice.tenantId, operationalEvent(notice, list), now);
    if (!result.replayed) for (const d of result.event.deliveries) woken.add(d.destinationId);
  }
  return [...woken];
}
