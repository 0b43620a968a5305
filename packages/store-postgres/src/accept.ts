/**
 * Ingest (docs/design.md, flow 1): a batch of events and their deliveries in one statement — atomic
 * on its own, so all or nothing without BEGIN/COMMIT — in one round trip whatever the batch
 * size (two when an idempotency key was already taken).
 *
 * Idempotency keys: the unique index on (tenant_id, idempotency_key) is the arbiter. Events go
 * in with `ON CONFLICT DO NOTHING`; a request whose key another transaction holds waits there
 * for it to end, and if it committed, skips the row. The skipped events then answer with the
 * winner's event and deliveries, read by a second statement (the winner has committed, so it
 * is visible). So concurrent requests with one key create one event and all get the first
 * answer. A key repeated within one batch answers with its first event.
 *
 * Keyed events are written in key order, so two batches that share several keys wait on them
 * in one order and cannot deadlock.
 *
 * Requests of one turn share the statement (`AcceptBatcher`): under load, the API's requests
 * that arrive together cost one round trip, one snapshot and one commit. Each still answers
 * only after the commit that made its events durable.
 */

import { newId } from '@sluice/core';
import { type AcceptedEvent, type AcceptResult, type NewEvent, type PerTurn, perTurn } from '@sluice/store';
import type { Queryable } from './db.ts';

/** Requests of this many events or more are accepted alone. */
const ALONE_FROM = 100;

interface AcceptRequest {
  tenantId: string;
  events: NewEvent[];
  now: number;
}

/**
 * Gathers the accepts of one turn of the event loop (`perTurn`, as the claims in claim.ts)
 * into one statement per tenant: the events of the requests one after the other, answered
 * apart. It is what each request would have got alone, in some order: a key two of them
 * share answers the later one with the earlier one's event, as a repeat would. Should the
 * shared statement fail (it is atomic: nothing was written), each request runs alone, so
 * one request's failure is never another's.
 */
export class AcceptBatcher {
  private readonly db: Queryable;
  private readonly loader: PerTurn<AcceptRequest, AcceptResult[]>;

  constructor(db: Queryable, maxRequests = 64) {
    this.db = db;
    this.loader = perTurn((requests) => acceptTogether(db, requests), maxRequests);
  }

  async accept(tenantId: string, events: NewEvent[], now: number): Promise<AcceptResult[]> {
    if (events.length === 0) return [];
    // A large batch is its own: it gains nothing from company, and keeps statements bounded.
    if (events.length >= ALONE_FROM) return acceptEvents(this.db, tenantId, events, now);
    return this.loader.load({ tenantId, events, now });
  }
}

async function acceptTogether(
  db: Queryable,
  requests: readonly AcceptRequest[],
): Promise<(AcceptResult[] | Error)[]> {
  const byTenant = new Map<string, number[]>();
  for (const [i, r] of requests.entries()) byTenant.set(r.tenantId, [...(byTenant.get(r.tenantId) ?? []), i]);
  const results: (AcceptResult[] | Error)[] = new Array(requests.length);
  const alone = async (i: number): Promise<void> => {
    const r = requests[i] as AcceptRequest;
    results[i] = await acceptEvents(db, r.tenantId, r.events, r.now).catch((err: unknown) =>
      err instanceof Error ? err : new Error(String(err)),
    );
  };
  await Promise.all(
    [...byTenant].map(async ([tenantId, indexes]) => {
      if (indexes.length === 1) return alone(indexes[0] as number);
      const mine = indexes.map((i) => requests[i] as AcceptRequest);
      let all: AcceptResult[];
      try {
        const now = Math.max(...mine.map((r) => r.now));
        all = await acceptEvents(
          db,
          tenantId,
          mine.flatMap((r) => r.events),
          now,
        );
      } catch {
        for (const i of indexes) await alone(i);
        return;
      }
      let at = 0;
      for (const [k, i] of indexes.entries()) {
        const n = (mine[k] as AcceptRequest).events.length;
        results[i] = all.slice(at, at + n);
        at += n;
      }
    }),
  );
  return results;
}

interface Planned {
  event: NewEvent;
  accepted: AcceptedEvent;
}

export async function acceptEvents(
  q: Queryable,
  tenantId: string,
  events: NewEvent[],
  now: number,
): Promise<AcceptResult[]> {
  if (events.length === 0) return [];
  // In memory first: ids for each event and delivery; a repeated key points at its first.
  const planned: Planned[] = [];
  const firstOfKey = new Map<string, Planned>();
  const answers = events.map((event) => {
    const earlier = event.idempotencyKey === null ? undefined : firstOfKey.get(event.idempotencyKey);
    if (earlier !== undefined) return { planned: earlier, repeated: true };
    const id = newId('evt');
    const deliveries = event.destinationIds.map((destinationId) => ({ id: newId('dlv'), destinationId }));
    const p: Planned = { event, accepted: { id, deliveries } };
    planned.push(p);
    if (event.idempotencyKey !== null) firstOfKey.set(event.idempotencyKey, p);
    return { planned: p, repeated: false };
  });
  const byKey = [...planned].sort((a, b) => compareKeys(a.event.idempotencyKey, b.event.idempotencyKey));
  const deliveries = planned.flatMap((p) =>
    p.accepted.deliveries.map((d) => ({ eventId: p.accepted.id, ...d })),
  );

  // One statement: the events, then the deliveries of the events actually inserted, in
  // input order (their `seq` is insertion order). No destination row is read or locked: a
  // delivery takes its `sequence` when it is first claimed (lifecycle.ts, docs/adr/0006).
  const inserted = await q.query(
    `WITH new_events AS (
       INSERT INTO events (id, tenant_id, type, payload, idempotency_key, created_at)
       SELECT u.id, $1, u.type, u.payload, u.idempotency_key, $2
       FROM unnest($3::text[], $4::text[], $5::text[], $6::text[])
         WITH ORDINALITY AS u(id, type, payload, idempotency_key, n)
       ORDER BY u.n
       ON CONFLICT (tenant_id, idempotency_key) WHERE idempotency_key IS NOT NULL DO NOTHING
       RETURNING id
     ), new_deliveries AS (
       INSERT INTO deliveries (id, event_id, destination_id, tenant_id, status, attempts, attempt_base,
         next_attempt_at, created_at, updated_at)
       SELECT u.id, u.event_id, u.destination_id, $1, 'pending', 0, 0, $2, $2, $2
       FROM unnest($7::text[], $8::text[], $9::text[]) WITH ORDINALITY AS u(id, event_id, destination_id, n)
       WHERE u.event_id IN (SELECT id FROM new_events)
       ORDER BY u.n
     )
     SELECT id FROM new_events`,
    [
      tenantId,
      now,
      byKey.map((p) => p.accepted.id),
      byKey.map((p) => p.event.type),
      byKey.map((p) => p.event.payload),
      byKey.map((p) => p.event.idempotencyKey),
      deliveries.map((d) => d.id),
      deliveries.map((d) => d.eventId),
      deliveries.map((d) => d.destinationId),
    ],
  );
  const insertedIds = new Set(inserted.map((r) => r.id as string));
  const lost = planned.filter((p) => !insertedIds.has(p.accepted.id));
  const winners = lost.length === 0 ? new Map<string, AcceptedEvent>() : await readWinners(q, tenantId, lost);
  return answers.map(({ planned: p, repeated }) => {
    const winner = p.event.idempotencyKey === null ? undefined : winners.get(p.event.idempotencyKey);
    if (winner !== undefined) return { event: winner, replayed: true };
    return { event: p.accepted, replayed: repeated };
  });
}

/**
 * $1 the tenant, $2 the keys: the event holding each key (one probe of `events_idempotency` on
 * both its columns, the LIMIT keeping it a probe per key) and its deliveries. With the keys as
 * `idempotency_key = ANY($2)`, a connection's generic plan made while `events` was nearly
 * empty reads the index by the tenant alone: all of its keyed events for each lookup
 * (docs/performance.md, "Postgres statements and their generic plans").
 */
const WINNERS = `SELECT e.id, e.idempotency_key, d.id AS delivery_id, d.destination_id
  FROM (SELECT DISTINCT unnest($2::text[]) AS key) k
  CROSS JOIN LATERAL (
    SELECT id, idempotency_key FROM events WHERE tenant_id = $1 AND idempotency_key = k.key LIMIT 1) e
  LEFT JOIN deliveries d ON d.event_id = e.id
  ORDER BY e.id, d.seq`;

/** The events that hold the keys of `lost`, each with its deliveries in insertion order. */
async function readWinners(
  q: Queryable,
  tenantId: string,
  lost: Planned[],
): Promise<Map<string, AcceptedEvent>> {
  const keys = lost.map((p) => p.event.idempotencyKey);
  const rows = await q.query(WINNERS, [tenantId, keys]);
  const winners = new Map<string, AcceptedEvent>();
  for (const r of rows) {
    const key = r.idempotency_key as string;
    let winner = winners.get(key);
    if (winner === undefined) {
      winner = { id: r.id as string, deliveries: [] };
      winners.set(key, winner);
    }
    if (r.delivery_id !== null) {
      winner.deliveries.push({ id: r.delivery_id as string, destinationId: r.destination_id as string });
    }
  }
  for (const key of keys) {
    // Only a key whose event was deleted between our insert and this read (retention of an
    // old event with no deliveries) gets here; the client may post again.
    if (key === null || !winners.has(key)) {
      throw new Error(`the event holding idempotency key ${JSON.stringify(key)} disappeared; try again`);
    }
  }
  return winners;
}

/** Keyed first, by key in code-unit order (the same in every process); unkeyed last. */
function compareKeys(a: string | null, b: string | null): number {
  if (a === b) return 0;
  if (a === null) return 1;
  if (b === null) return -1;
  return a < b ? -1 : 1;
}
