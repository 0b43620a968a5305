/**
 * The SQLite store's reads of work in flight and its repairs: what a destination has left,
 * the destinations with pending work, claims returned after a crash or a lowered limit, and
 * the attempt history the send windows and the counts are made of.
 */

import { sqlSourcesOf } from '@sluice/core';
import type { DestinationCounts, DestinationWork, StaleClaim } from '@sluice/store';
import type { Sql } from './lists.ts';
import { WITH_PENDING } from './pending.ts';

type Row = Record<string, unknown>;

const IN_QUEUE = `SELECT count(*) AS n FROM deliveries WHERE destination_id = ? AND status IN ('queued', 'delivering')`;

export function destinationWork(db: Sql, destinationId: string): DestinationWork {
  const pending = db
    .sql(
      `SELECT next_attempt_at FROM deliveries WHERE destination_id = ? AND status = 'pending'
       ORDER BY next_attempt_at LIMIT 1`,
    )
    .get(destinationId);
  const claimed = db.sql(IN_QUEUE).get(destinationId) as Row;
  return {
    nextPendingAt: pending ? (pending.next_attempt_at as number) : null,
    inQueue: claimed.n as number,
  };
}

export function pendingDestinations(db: Sql): { destinationId: string; nextPendingAt: number }[] {
  return db
    .sql(
      `${WITH_PENDING}
       SELECT t.id AS destination_id,
         (SELECT min(d.next_attempt_at) FROM deliveries d WHERE d.destination_id = t.id AND d.status = 'pending')
           AS next_pending_at
       FROM pending p JOIN destinations t ON t.id = p.id
       WHERE t.state = 'active' AND t.deleted_at IS NULL`,
    )
    .all()
    .filter((r) => r.next_pending_at !== null)
    .map((r) => ({
      destinationId: r.destination_id as string,
      nextPendingAt: r.next_pending_at as number,
    }));
}

export function oldestDueAt(db: Sql, now: number): number | null {
  const row = db
    .sql(
      `${WITH_PENDING}
       SELECT min((SELECT min(d.next_attempt_at) FROM deliveries d
                   WHERE d.destination_id = t.id AND d.status = 'pending')) AS oldest
       FROM pending p JOIN destinations t ON t.id = p.id
       WHERE t.state = 'active' AND t.deleted_at IS NULL`,
    )
    .get();
  const oldest = (row?.oldest as number | null | undefined) ?? null;
  return oldest !== null && oldest <= now ? oldest : null;
}

export function requeue(
  db: Sql,
  claimedBefore: number,
  keep: ReadonlySet<string>,
  now: number,
  attempted = false,
): Map<string, number> {
  return db.tx(() => {
    const rows = db
      .sql(
        `SELECT id, destination_id FROM deliveries
         WHERE status IN (${sqlSourcesOf('expire')}) AND claimed_at < ?`,
      )
      .all(claimedBefore);
    const perDestination = new Map<string, number>();
    const ids: string[] = [];
    for (const r of rows) {
      if (keep.has(r.id as string)) continue;
      ids.push(r.id as string);
      const d = r.destination_id as string;
      perDestination.set(d, (perDestination.get(d) ?? 0) + 1);
    }
    if (ids.length > 0) {
      db.sql(
        `UPDATE deliveries SET status = 'pending', claimed_at = NULL, next_attempt_at = ?, updated_at = ?,
           attempts = attempts + ?
         WHERE id IN (SELECT value FROM json_each(?)) AND status IN (${sqlSourcesOf('expire')})`,
      ).run(now, now, attempted ? 1 : 0, JSON.stringify(ids));
    }
    return perDestination;
  });
}

export function releaseClaims(
  db: Sql,
  deliveryIds: readonly string[],
  now: number,
  attempted = false,
): number {
  if (deliveryIds.length === 0) return 0;
  return db.tx(() =>
    Number(
      db
        .sql(
          `UPDATE deliveries SET status = 'pending', claimed_at = NULL, updated_at = ?, attempts = attempts + ?
           WHERE id IN (SELECT value FROM json_each(?)) AND status IN (${sqlSourcesOf('release')})`,
        )
        .run(now, attempted ? 1 : 0, JSON.stringify(deliveryIds)).changes,
    ),
  );
}

export function staleClaims(db: Sql, claimedBefore: number): StaleClaim[] {
  return db
    .sql(
      `SELECT id, destination_id, attempts FROM deliveries
       WHERE status IN (${sqlSourcesOf('expire')}) AND claimed_at < ? ORDER BY id`,
    )
    .all(claimedBefore)
    .map((r) => ({
      id: r.id as string,
      destinationId: r.destination_id as string,
      attempts: r.attempts as number,
    }));
}

export function recentAttempts(
  db: Sql,
  since: number,
): { destinationId: string; startedAt: number; finishedAt: number }[] {
  return db
    .sql(
      'SELECT destination_id, started_at, finished_at FROM attempts WHERE started_at >= ? ORDER BY started_at',
    )
    .all(since)
    .map((r) => ({
      destinationId: r.destination_id as string,
      startedAt: r.started_at as number,
      finishedAt: r.finished_at as number,
    }));
}

export function countsFor(db: Sql, destinationId: string, since: number): DestinationCounts {
  const pending = db
    .sql(
      `SELECT count(*) AS n, min(created_at) AS oldest FROM deliveries
       WHERE destination_id = ? AND status = 'pending'`,
    )
    .get(destinationId) as Row;
  const claimed = db.sql(IN_QUEUE).get(destinationId) as Row;
  const settled = db
    .sql(
      `SELECT status, count(*) AS n FROM deliveries
       WHERE destination_id = ? AND status IN ('delivered', 'dead') AND updated_at >= ? GROUP BY status`,
    )
    .all(destinationId, since);
  const settledCount = (status: string): number =>
    (settled.find((r) => r.status === status)?.n as number) ?? 0;
  return {
    pending: pending.n as number,
    inQueue: claimed.n as number,
    oldestPendingAt: (pending.oldest as number | null) ?? null,
    delivered: settledCount('delivered'),
    dead: settledCount('dead'),
  };
}

export function attemptTimes(db: Sql, destinationId: string, from: number, to: number): number[] {
  return db
    .sql(
      `SELECT started_at FROM attempts WHERE destination_id = ? AND started_at >= ? AND started_at < ?
       ORDER BY started_at`,
    )
    .all(destinationId, from, to)
    .map((r) => r.started_at as number);
}
