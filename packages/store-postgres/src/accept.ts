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
import {
  type AcceptedEvent,
  type AcceptResult,
  type ClaimedDelivery,
  type NewEvent,
  type PerTurn,
  perTurn,
} from '@sluice/store';
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
    p.accepted.deliveries.map((d) => ({
      eventId: p.accepted.id,
      ...d,
      mine: p.event.queueTo?.includes(d.destinationId) === true,
    })),
  );

  // One statement: the events, then the deliveries of the events actually inserted, in
  // input order (their `seq` is insertion order). No destination row is read or locked: a
  // delivery takes its `sequence` when it is first claimed (lifecycle.ts, docs/adr/0006) —
  // unless the caller publishes it itself (`queueTo`, QUEUED_SQL below).
  const roomy = [...new Set(deliveries.filter((d) => d.mine).map((d) => d.destinationId))];
  const params: unknown[] = [
    tenantId,
    now,
    byKey.map((p) => p.accepted.id),
    byKey.map((p) => p.event.type),
    byKey.map((p) => p.event.payload),
    byKey.map((p) => p.event.idempotencyKey),
    deliveries.map((d) => d.id),
    deliveries.map((d) => d.eventId),
    deliveries.map((d) => d.destinationId),
  ];
  const inserted = await q.query(roomy.length === 0 ? ACCEPT_SQL : QUEUED_SQL, [
    ...params,
    ...(roomy.length === 0 ? [] : [deliveries.map((d) => d.mine), roomy]),
  ]);
  const insertedIds = new Set(inserted.filter((r) => r.sequence === null).map((r) => r.id as string));
  const sequences = new Map(
    inserted.filter((r) => r.sequence !== null).map((r) => [r.id as string, Number(r.sequence)]),
  );
  const lost = planned.filter((p) => !insertedIds.has(p.accepted.id));
  const winners = lost.length === 0 ? new Map<string, AcceptedEvent>() : await readWinners(q, tenantId, lost);
  return answers.map(({ planned: p, repeated }) => {
    const winner = p.event.idempotencyKey === null ? undefined : winners.get(p.event.idempotencyKey);
    if (winner !== undefined) return { event: winner, replayed: true };
    if (repeated || sequences.size === 0) return { event: p.accepted, replayed: repeated };
    return { event: p.accepted, replayed: false, claimed: claimedOf(p, sequences, now) };
  });
}

/** The deliveries of `p` the statement inserted claimed, as a claim answers them. */
function claimedOf(p: Planned, sequences: ReadonlyMap<string, number>, now: number): ClaimedDelivery[] {
  const claimed: ClaimedDelivery[] = [];
  for (const d of p.accepted.deliveries) {
    const sequence = sequences.get(d.id);
    if (sequence === undefined) continue;
    claimed.push({
      id: d.id,
      eventId: p.accepted.id,
      destinationId: d.destinationId,
      eventType: p.event.type,
      payload: p.event.payload,
      sequence,
      attempts: 0,
      attemptBase: 0,
      eventCreatedAt: now,
    });
  }
  return claimed;
}

/**
 * $1 tenant, $2 now, $3–$6 the events (id, type, payload, key) in key order, $7–$9 the
 * deliveries (id, event, destination) in input order. Answers the ids of the events inserted
 * (`sequence` null).
 */
const EVENTS_CTE = `WITH new_events AS (
       INSERT INTO events (id, tenant_id, type, payload, idempotency_key, created_at)
       SELECT u.id, $1, u.type, u.payload, u.idempotency_key, $2
       FROM unnest($3::text[], $4::text[], $5::text[], $6::text[])
         WITH ORDINALITY AS u(id, type, payload, idempotency_key, n)
       ORDER BY u.n
       ON CONFLICT (tenant_id, idempotency_key) WHERE idempotency_key IS NOT NULL DO NOTHING
       RETURNING id
     )`;

const ACCEPT_SQL = `${EVENTS_CTE}, new_deliveries AS (
       INSERT INTO deliveries (id, event_id, destination_id, tenant_id, status, attempts, attempt_base,
         next_attempt_at, created_at, updated_at)
       SELECT u.id, u.event_id, u.destination_id, $1, 'pending', 0, 0, $2, $2, $2
       FROM unnest($7::text[], $8::text[], $9::text[]) WITH ORDINALITY AS u(id, event_id, destination_id, n)
       WHERE u.event_id IN (SELECT id FROM new_events)
       ORDER BY u.n
     )
     SELECT id, NULL::bigint AS sequence FROM new_events`;

/**
 * ACCEPT_SQL, where the caller publishes some deliveries itself (docs/adr/0016): $10 marks
 * each delivery it may take, $11 their destinations. `room` locks those destinations' rows
 * that have no pending delivery (a delivery accepted before this statement began waits
 * ahead of these: inserted claimed, they would leave before it), skipping a row another
 * statement holds (a claim or a completion: it keeps its pending path, and no lock is ever
 * waited for here, so this statement cannot be part of a deadlock); their deliveries go in
 * `queued`, numbered from the locked row's `next_sequence` in input order, as a claim numbers
 * them, and `taken` bumps it. Answers the events inserted, then the deliveries inserted
 * claimed with their `sequence`.
 */
const QUEUED_SQL = `${EVENTS_CTE}, room AS (
       SELECT d.id, d.next_sequence FROM destinations d
       WHERE d.id = ANY($11::text[])
         AND NOT EXISTS (SELECT 1 FROM deliveries p WHERE p.destination_id = d.id AND p.status = 'pending')
       FOR NO KEY UPDATE OF d SKIP LOCKED
     ), planned AS (
       SELECT u.id, u.event_id, u.destination_id, u.n, u.mine AND r.id IS NOT NULL AS queued, r.next_sequence
       FROM unnest($7::text[], $8::text[], $9::text[], $10::boolean[])
         WITH ORDINALITY AS u(id, event_id, destination_id, mine, n)
       LEFT JOIN room r ON r.id = u.destination_id
       WHERE u.event_id IN (SELECT id FROM new_events)
     ), placed AS (
       SELECT p.*, CASE WHEN p.queued THEN p.next_sequence - 1 +
         row_number() OVER (PARTITION BY p.destination_id, p.queued ORDER BY p.n) END AS sequence
       FROM planned p
     ), taken AS (
       UPDATE destinations d SET next_sequence = d.next_sequence + f.n
       FROM (SELECT destination_id, count(*) AS n FROM placed WHERE queued GROUP BY destination_id) f
       WHERE d.id = f.destination_id
     ), new_deliveries AS (
       INSERT INTO deliveries (id, event_id, destination_id, tenant_id, status, attempts, attempt_base,
         next_attempt_at, created_at, updated_at, sequence, claimed_at)
       SELECT id, event_id, destination_id, $1, CASE WHEN queued THEN 'queued' ELSE 'pending' END, 0, 0,
         $2, $2, $2, sequence, CASE WHEN queued THEN $2::bigint END
       FROM placed ORDER BY n
       RETURNING id, status, sequence
     )
     SELECT id, NULL::bigint AS sequence FROM new_events
     UNION ALL SELECT id, sequence FROM new_deliveries WHERE status = 'queued'`;

/** The events that hold the keys of `lost`, each with its deliveries in insertion order. */
async function readWinners(
  q: Queryable,
  tenantId: string,
  lost: Planned[],
): Promise<Map<string, AcceptedEvent>> {
  const keys = lost.map((p) => p.event.idempotencyKey);
  const rows = await q.query(
    `SELECT e.id, e.idempotency_key, d.id AS delivery_id, d.destination_id
     FROM events e LEFT JOIN deliveries d ON d.event_id = e.id
     WHERE e.tenant_id = $1 AND e.idempotency_key = ANY($2::text[])
     ORDER BY e.id, d.seq`,
    [tenantId, keys],
  );
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
