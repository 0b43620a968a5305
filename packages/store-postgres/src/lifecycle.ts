/**
 * The delivery lifecycle on Postgres: claim, complete, requeue, and what the limiter and the
 * sweeper read. Each call is one statement (so one round trip, and atomic on its own).
 *
 *   pending ──claimDue──▶ queued ──(worker)──▶ delivering ──completeAttempts──▶ delivered
 *      ▲                    │                      │                          ├▶ pending (retry)
 *      └──────requeue───────┴──────────────────────┘                          └▶ dead
 *
 * The claim itself is claim.ts (many destinations in one statement).
 */

import { sourcesOf, sqlSourcesOf } from '@sluice/core';
import type { DestinationCounts, DestinationWork, StaleClaim } from '@sluice/store';
import type { Db, Queryable } from './db.ts';
import { NEXT_PENDING, PENDING_DESTINATION, WITH_PENDING } from './pending.ts';

/**
 * Returns `queued`/`delivering` deliveries claimed before `claimedBefore` to pending, due now,
 * except `keep`. A row another transaction holds (being completed or cancelled right now) is
 * skipped: it is moving on anyway, and the next sweep sees it if not.
 */
export async function requeue(
  db: Queryable,
  claimedBefore: number,
  keep: ReadonlySet<string>,
  now: number,
  attempted = false,
): Promise<Map<string, number>> {
  const rows = await db.query(
    `WITH back AS (
       UPDATE deliveries SET status = 'pending', claimed_at = NULL, next_attempt_at = $3, updated_at = $3,
         attempts = attempts + $4
       WHERE id IN (
         SELECT id FROM deliveries
         WHERE status IN (${sqlSourcesOf('expire')}) AND claimed_at < $1 AND NOT (id = ANY($2::text[]))
         FOR UPDATE SKIP LOCKED)
       RETURNING destination_id
     )
     SELECT destination_id, count(*) AS n FROM back GROUP BY destination_id`,
    // The sweeper passes +Infinity for "every claimed delivery": BIGINT has no infinity.
    [clampMs(claimedBefore), [...keep], now, attempted ? 1 : 0],
  );
  return new Map(rows.map((r) => [r.destination_id as string, r.n as number]));
}

/**
 * `Store.releaseClaims`: queued deliveries back to pending, their due time unchanged. On the
 * generic-plan pool, by their primary key, as a completion finds them (complete.ts): with the
 * statuses in the SQL, a generic plan made while `deliveries` was nearly empty reads the whole
 * of `deliveries_claimed` for the ids, an entry for every claim since the last vacuum, so the
 * statuses come as a parameter ($4), which no plan can match to that index.
 */
export async function releaseClaims(
  db: Pick<Db, 'generic'>,
  deliveryIds: readonly string[],
  now: number,
  attempted = false,
): Promise<number> {
  if (deliveryIds.length === 0) return 0;
  const rows = await db.generic.query(
    `UPDATE deliveries SET status = 'pending', claimed_at = NULL, updated_at = $2, attempts = attempts + $3
     WHERE id = ANY($1::text[]) AND status = ANY($4::text[])
     RETURNING id`,
    [[...deliveryIds], now, attempted ? 1 : 0, sourcesOf('release')],
  );
  return rows.length;
}

/**
 * `Store.cancelOrphans`: the pending deliveries of deleted destinations, found by walking the
 * destinations with pending work (`WITH_PENDING`, so a sweep with no orphans reads only that
 * walk), cancelled. On the generic-plan pool, and the status a parameter ($2): the orphans'
 * deliveries are then read under their ids from `deliveries_destination`, whatever the plan was
 * made on. As `destination_id IN (<the walk>)`, a generic plan made while `deliveries` was
 * nearly empty reads every pending delivery and walks the destinations again for each one; as
 * `destination_id = ANY(…)` with the status in the SQL, it reads the whole of
 * `deliveries_unfinished_tenant` (docs/performance.md, "Postgres statements and their generic
 * plans").
 */
export async function cancelOrphans(db: Pick<Db, 'generic'>, now: number): Promise<number> {
  const [r] = await db.generic.query(
    `${WITH_PENDING}, cancelled AS (
       UPDATE deliveries SET status = 'cancelled', updated_at = $1
       WHERE status = $2 AND destination_id = ANY (ARRAY(
         SELECT t.id FROM pending p ${PENDING_DESTINATION} WHERE t.deleted_at IS NOT NULL))
       RETURNING 1
     )
     SELECT count(*)::int AS n FROM cancelled`,
    [now, 'pending'],
  );
  return Number(r?.n ?? 0);
}

export async function staleClaims(db: Queryable, claimedBefore: number): Promise<StaleClaim[]> {
  const rows = await db.query(
    `SELECT id, destination_id, attempts FROM deliveries
     WHERE status IN (${sqlSourcesOf('expire')}) AND claimed_at < $1 ORDER BY id`,
    [clampMs(claimedBefore)],
  );
  return rows.map((r) => ({
    id: r.id as string,
    destinationId: r.destination_id as string,
    attempts: r.attempts as number,
  }));
}

function clampMs(ms: number): number {
  return Math.max(Number.MIN_SAFE_INTEGER, Math.min(Number.MAX_SAFE_INTEGER, ms));
}

export async function destinationWork(db: Queryable, destinationId: string): Promise<DestinationWork> {
  const [r] = await db.query(
    `SELECT (${NEXT_PENDING}) AS next_pending_at,
       (SELECT count(*) FROM deliveries WHERE destination_id = $1 AND status IN ('queued', 'delivering'))
         AS in_queue`,
    [destinationId],
  );
  return {
    nextPendingAt: (r?.next_pending_at as number | null) ?? null,
    inQueue: (r?.in_queue as number) ?? 0,
  };
}

export const PENDING_DESTINATIONS = `${WITH_PENDING}
  SELECT t.id AS destination_id, n.next_pending_at
  FROM pending p ${PENDING_DESTINATION} CROSS JOIN LATERAL (
    SELECT min(d.next_attempt_at) AS next_pending_at FROM deliveries d
    WHERE d.destination_id = t.id AND d.status = 'pending') n
  WHERE t.state = 'active' AND t.deleted_at IS NULL AND n.next_pending_at IS NOT NULL`;

export async function pendingDestinations(
  db: Queryable,
): Promise<{ destinationId: string; nextPendingAt: number }[]> {
  const rows = await db.query(PENDING_DESTINATIONS);
  return rows.map((r) => ({
    destinationId: r.destination_id as string,
    nextPendingAt: r.next_pending_at as number,
  }));
}

/** One probe of `deliveries_due` per active destination (a loose index scan), not a scan of the backlog. */
export async function oldestDueAt(db: Queryable, now: number): Promise<number | null> {
  const rows = await db.query(
    `${WITH_PENDING}
     SELECT min(n.next_attempt_at) AS oldest
     FROM pending p ${PENDING_DESTINATION} CROSS JOIN LATERAL (
       SELECT d.next_attempt_at FROM deliveries d
       WHERE d.destination_id = t.id AND d.status = 'pending'
       ORDER BY d.next_attempt_at LIMIT 1) n
     WHERE t.state = 'active' AND t.deleted_at IS NULL`,
  );
  const oldest = (rows[0]?.oldest as number | null | undefined) ?? null;
  return oldest !== null && oldest <= now ? oldest : null;
}

export async function recentAttempts(
  db: Queryable,
  since: number,
): Promise<{ destinationId: string; startedAt: number; finishedAt: number }[]> {
  const rows = await db.query(
    'SELECT destination_id, started_at, finished_at FROM attempts WHERE started_at >= $1 ORDER BY started_at',
    [since],
  );
  return rows.map((r) => ({
    destinationId: r.destination_id as string,
    startedAt: r.started_at as number,
    finishedAt: r.finished_at as number,
  }));
}

export async function countsFor(
  db: Queryable,
  destinationId: string,
  since: number,
): Promise<DestinationCounts> {
  const [r] = await db.query(
    `SELECT p.pending, p.oldest, q.in_queue, s.delivered, s.dead
     FROM (SELECT count(*) AS pending, min(created_at) AS oldest FROM deliveries
           WHERE destination_id = $1 AND status = 'pending') p,
          (SELECT count(*) AS in_queue FROM deliveries
           WHERE destination_id = $1 AND status IN ('queued', 'delivering')) q,
          (SELECT count(*) FILTER (WHERE status = 'delivered') AS delivered,
                  count(*) FILTER (WHERE status = 'dead') AS dead
           FROM deliveries WHERE destination_id = $1 AND status IN ('delivered', 'dead') AND updated_at >= $2) s`,
    [destinationId, since],
  );
  return {
    pending: (r?.pending as number) ?? 0,
    inQueue: (r?.in_queue as number) ?? 0,
    oldestPendingAt: (r?.oldest as number | null) ?? null,
    delivered: (r?.delivered as number) ?? 0,
    dead: (r?.dead as number) ?? 0,
  };
}

export async function attemptTimes(
  db: Queryable,
  destinationId: string,
  from: number,
  to: number,
): Promise<number[]> {
  const rows = await db.query(
    `SELECT started_at FROM attempts WHERE destination_id = $1 AND started_at >= $2 AND started_at < $3
     ORDER BY started_at`,
    [destinationId, from, to],
  );
  return rows.map((r) => r.started_at as number);
}
