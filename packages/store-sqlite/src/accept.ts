/**
 * Accepting an event on SQLite: its row and one pending delivery per destination, or, for an
 * idempotency key already used by the tenant, the first event's answer. Runs inside the
 * caller's transaction (the turn's batch, turn-batch.ts, or an alert's change, alerts.ts).
 */

import { newId } from '@sluice/core';
import type { AcceptResult, NewEvent } from '@sluice/store';
import type { Sql } from './lists.ts';

export function acceptOne(
  db: Pick<Sql, 'sql'>,
  tenantId: string,
  event: NewEvent,
  now: number,
): AcceptResult {
  if (event.idempotencyKey !== null) {
    const first = acceptedWithKey(db, tenantId, event.idempotencyKey);
    if (first) return first;
  }
  const id = newId('evt');
  db.sql(
    'INSERT INTO events (id, tenant_id, type, payload, idempotency_key, created_at) VALUES (?, ?, ?, ?, ?, ?)',
  ).run(id, tenantId, event.type, event.payload, event.idempotencyKey, now);
  // No sequence yet (0): a delivery takes one when it is first claimed (claim.ts).
  const insert = db.sql(
    `INSERT INTO deliveries (id, event_id, destination_id, tenant_id, status, attempts, next_attempt_at,
       created_at, updated_at)
     VALUES (?, ?, ?, ?, 'pending', 0, ?, ?, ?)`,
  );
  const deliveries = event.destinationIds.map((destinationId) => {
    const deliveryId = newId('dlv');
    insert.run(deliveryId, id, destinationId, tenantId, now, now, now);
    return { id: deliveryId, destinationId };
  });
  return { event: { id, deliveries }, replayed: false };
}

/** The tenant's event accepted with this idempotency key, as a replay's answer; none: undefined. */
export function acceptedWithKey(
  db: Pick<Sql, 'sql'>,
  tenantId: string,
  key: string,
): AcceptResult | undefined {
  const first = db
    .sql('SELECT id FROM events WHERE tenant_id = ? AND idempotency_key = ?')
    .get(tenantId, key);
  if (!first) return undefined;
  const eventId = first.id as string;
  const deliveries = db
    .sql('SELECT id, destination_id FROM deliveries WHERE event_id = ? ORDER BY rowid')
    .all(eventId)
    .map((r) => ({ id: r.id as string, destinationId: r.destination_id as string }));
  return { event: { id: eventId, deliveries }, replayed: true };
}
