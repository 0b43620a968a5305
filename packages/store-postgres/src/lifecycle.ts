/**
 * The delivery lifecycle on Postgres: claim, complete, requeue, and what the limiter and the
 * sweeper read. Each call is one statement (so one round trip, and atomic on its own).
 *
 *   pending ──claimDue──▶ queued ──(worker)──▶ delivering ──completeAttempts──▶ delivered
 *      ▲                    │                      │                          ├▶ pending (retry)
 *      └──────requeue───────┴──────────────────────┘                          └▶ dead
 *
 * Many rate-limiter replicas claim at once: `FOR UPDATE SKIP LOCKED` lets each take rows no
 * other claim holds, so no delivery is claimed twice and no claim waits on another.
 */

import type { ClaimOrder } from '@sluice/core';
import {
  type Claim,
  type CompletedAttempt,
  claimedFromRow,
  type DestinationCounts,
  type DestinationWork,
} from '@sluice/engine';
import type { Queryable } from './db.ts';

/**
 * $1 destination, $2 max, $3 now. The inner SELECT reads the pending rows in claim order —
 * `due`: due time, then insertion (`deliveries_due`); `sequence`: the destination's sequence
 * (`deliveries_sequence`, a fifo destination) — and stops after $2 rows it could lock.
 * `next_pending` reads `deliveries_due` for the earliest row left pending: the statement's
 * snapshot still shows the claimed rows as pending, so they are left out by id. One row per
 * claimed delivery, or a single row with a null id when nothing was claimed; every row
 * carries `next_pending_at`.
 */
function claimDueSql(orderBy: string, orderClaimedBy: string): string {
  return `
  WITH claimed AS (
    UPDATE deliveries SET status = 'queued', claimed_at = $3, updated_at = $3
    WHERE id IN (
      SELECT id FROM deliveries
      WHERE destination_id = $1 AND status = 'pending' AND next_attempt_at <= $3
      ORDER BY ${orderBy}
      LIMIT $2
      FOR UPDATE SKIP LOCKED)
    RETURNING id, event_id, sequence, attempts, attempt_base, next_attempt_at, seq
  ), next_pending AS (
    SELECT min(next_attempt_at) AS at FROM deliveries
    WHERE destination_id = $1 AND status = 'pending' AND id NOT IN (SELECT id FROM claimed)
  )
  SELECT c.id, c.event_id, c.sequence, c.attempts, c.attempt_base, e.type, e.payload, e.created_at,
    n.at AS next_pending_at
  FROM next_pending n
  LEFT JOIN (claimed c JOIN events e ON e.id = c.event_id) ON true
  ORDER BY ${orderClaimedBy}`;
}

export const CLAIM_DUE: Record<ClaimOrder, string> = {
  due: claimDueSql('next_attempt_at, seq', 'c.next_attempt_at, c.seq'),
  sequence: claimDueSql('sequence', 'c.sequence'),
};

/** Takes up to `max` due deliveries of a destination, in claim order, and marks them queued. */
export async function claimDue(
  db: Queryable,
  destinationId: string,
  max: number,
  now: number,
  order: ClaimOrder = 'due',
): Promise<Claim> {
  const rows = await db.query(CLAIM_DUE[order], [destinationId, Math.max(0, max), now]);
  const deliveries = rows.filter((r) => r.id !== null).map((r) => claimedFromRow(r, destinationId));
  return { deliveries, nextPendingAt: (rows[0]?.next_pending_at as number | null | undefined) ?? null };
}

/**
 * Records the attempts and moves their deliveries on, in one statement. Only a delivery
 * still `queued`/`delivering` moves: a completion never resurrects a cancelled or settled one.
 *
 * Safe to repeat: the completion writer retries a batch whose write failed, and a commit
 * whose answer was lost would otherwise fail forever on the attempts' primary key. A repeated
 * attempt is skipped (`ON CONFLICT DO NOTHING`) and its delivery has already moved.
 */
export async function completeAttempts(
  db: Queryable,
  completed: CompletedAttempt[],
  now: number,
): Promise<void> {
  if (completed.length === 0) return;
  const attempts = completed.map((c) => c.attempt);
  // One update per delivery, the first completion's: as in a sequential store, where the
  // first moves it out of `queued` and the rest find nothing to move.
  const moves = new Map<string, CompletedAttempt>();
  for (const c of completed) if (!moves.has(c.attempt.deliveryId)) moves.set(c.attempt.deliveryId, c);
  // In id order: two batches that share deliveries (a lease expired and another worker took
  // one) then lock them in one order under the usual plan for a batch (a nested loop over the
  // list), so they wait on each other instead of deadlocking.
  const updates = [...moves.values()].sort((a, b) => (a.attempt.deliveryId < b.attempt.deliveryId ? -1 : 1));
  // Destinations to disable are locked in id order, the order an accept locks them in
  // (accept.ts bumps their sequences): the two never wait on each other in a cycle.
  const disable = [
    ...new Set(completed.filter((c) => c.disableDestination).map((c) => c.attempt.destinationId)),
  ];
  await db.query(
    `WITH recorded AS (
       INSERT INTO attempts (id, delivery_id, destination_id, attempt, started_at, finished_at, status_code,
         error_code, error_message, response_excerpt)
       SELECT * FROM unnest($2::text[], $3::text[], $4::text[], $5::int[], $6::bigint[], $7::bigint[],
         $8::int[], $9::text[], $10::text[], $11::text[])
       ON CONFLICT (id) DO NOTHING
     ), moved AS (
       UPDATE deliveries d SET status = u.status, attempts = u.attempt, next_attempt_at = u.next_attempt_at,
         last_error = u.last_error, claimed_at = NULL, updated_at = $1
       FROM unnest($12::text[], $13::text[], $14::int[], $15::bigint[], $16::text[])
         AS u(id, status, attempt, next_attempt_at, last_error)
       WHERE d.id = u.id AND d.status IN ('queued', 'delivering')
     )
     UPDATE destinations SET state = 'disabled', disabled_reason = 'gone', updated_at = $1
     WHERE id IN (SELECT id FROM destinations WHERE id = ANY($17::text[]) AND state = 'active'
                  ORDER BY id FOR UPDATE)`,
    [
      now,
      attempts.map((a) => a.id),
      attempts.map((a) => a.deliveryId),
      attempts.map((a) => a.destinationId),
      attempts.map((a) => a.attempt),
      attempts.map((a) => a.startedAt),
      attempts.map((a) => a.finishedAt),
      attempts.map((a) => a.statusCode),
      attempts.map((a) => text(a.errorCode)),
      attempts.map((a) => text(a.errorMessage)),
      attempts.map((a) => text(a.responseExcerpt)),
      updates.map((c) => c.attempt.deliveryId),
      updates.map((c) => c.status),
      updates.map((c) => c.attempt.attempt),
      updates.map((c) => c.nextAttemptAt),
      updates.map(({ attempt: a, status }) =>
        text(a.errorCode ?? (status === 'delivered' ? null : `http_${a.statusCode}`)),
      ),
      disable,
    ],
  );
}

/**
 * Postgres text cannot hold U+0000, and these strings come from the outside (a receiver's
 * body, an error message): one NUL would fail the whole batch, again on every retry. It
 * becomes U+FFFD, as an undecodable byte already does.
 */
function text(value: string | null): string | null {
  return value === null ? null : value.replaceAll('\u0000', '\uFFFD');
}

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
): Promise<Map<string, number>> {
  const rows = await db.query(
    `WITH back AS (
       UPDATE deliveries SET status = 'pending', claimed_at = NULL, next_attempt_at = $3, updated_at = $3
       WHERE id IN (
         SELECT id FROM deliveries
         WHERE status IN ('queued', 'delivering') AND claimed_at < $1 AND NOT (id = ANY($2::text[]))
         FOR UPDATE SKIP LOCKED)
       RETURNING destination_id
     )
     SELECT destination_id, count(*) AS n FROM back GROUP BY destination_id`,
    // The sweeper passes +Infinity for "every claimed delivery": BIGINT has no infinity.
    [clampMs(claimedBefore), [...keep], now],
  );
  return new Map(rows.map((r) => [r.destination_id as string, r.n as number]));
}

export async function staleClaims(
  db: Queryable,
  claimedBefore: number,
): Promise<{ id: string; attempts: number }[]> {
  const rows = await db.query(
    `SELECT id, attempts FROM deliveries
     WHERE status IN ('queued', 'delivering') AND claimed_at < $1 ORDER BY id`,
    [clampMs(claimedBefore)],
  );
  return rows.map((r) => ({ id: r.id as string, attempts: r.attempts as number }));
}

function clampMs(ms: number): number {
  return Math.max(Number.MIN_SAFE_INTEGER, Math.min(Number.MAX_SAFE_INTEGER, ms));
}

export async function destinationWork(db: Queryable, destinationId: string): Promise<DestinationWork> {
  const [r] = await db.query(
    `SELECT
       (SELECT min(next_attempt_at) FROM deliveries WHERE destination_id = $1 AND status = 'pending')
         AS next_pending_at,
       (SELECT count(*) FROM deliveries WHERE destination_id = $1 AND status IN ('queued', 'delivering'))
         AS in_queue`,
    [destinationId],
  );
  return {
    nextPendingAt: (r?.next_pending_at as number | null) ?? null,
    inQueue: (r?.in_queue as number) ?? 0,
  };
}

export async function pendingDestinations(
  db: Queryable,
): Promise<{ destinationId: string; nextPendingAt: number }[]> {
  const rows = await db.query(
    `SELECT t.id AS destination_id, p.next_pending_at
     FROM destinations t CROSS JOIN LATERAL (
       SELECT min(d.next_attempt_at) AS next_pending_at FROM deliveries d
       WHERE d.destination_id = t.id AND d.status = 'pending') p
     WHERE t.state = 'active' AND t.deleted_at IS NULL AND p.next_pending_at IS NOT NULL`,
  );
  return rows.map((r) => ({
    destinationId: r.destination_id as string,
    nextPendingAt: r.next_pending_at as number,
  }));
}

/** One probe of `deliveries_due` per active destination (a loose index scan), not a scan of the backlog. */
export async function oldestDueAt(db: Queryable, now: number): Promise<number | null> {
  const rows = await db.query(
    `SELECT min(p.next_attempt_at) AS oldest
     FROM destinations t CROSS JOIN LATERAL (
       SELECT d.next_attempt_at FROM deliveries d
       WHERE d.destination_id = t.id AND d.status = 'pending'
       ORDER BY d.next_attempt_at LIMIT 1) p
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
