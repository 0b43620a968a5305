/**
 * Endpoint health on Postgres, beside the completions (complete.ts): the probe claim of a
 * suspended destination, an operator's reset, and what the API and the metrics read
 * (docs/adr/0007). A probe or a reset is rare (at most one per probe interval per
 * suspended destination), so each is a short transaction that locks the destination row:
 * two limiter replicas never both take a probe.
 */

import { HEALTH_STATES, HEALTHY, type Health, type HealthState } from '@sluice/core';
import {
  claimedFromRow,
  type HealthChange,
  type HealthTransition,
  healthFromRow,
  type ProbeClaim,
  recoveredNotice,
  transitionFromRow,
} from '@sluice/store';
import type { Db, Queryable } from './db.ts';
import { emitNotices } from './operational.ts';
import { NEXT_PENDING } from './pending.ts';
import { DESTINATION_BY_ID_FOR_UPDATE, live } from './rows.ts';

async function nextPendingAt(q: Queryable, destinationId: string): Promise<number | null> {
  const [r] = await q.query(NEXT_PENDING, [destinationId]);
  return (r?.at as number | null | undefined) ?? null;
}

export async function claimProbe(
  db: Db,
  destinationId: string,
  now: number,
  holdUntil: number,
): Promise<ProbeClaim> {
  return db.tx(async (q) => {
    const row = live((await q.query(DESTINATION_BY_ID_FOR_UPDATE, [destinationId]))[0]);
    const health = row ? healthFromRow(row) : HEALTHY;
    if (health.state !== 'suspended')
      return { deliveries: [], nextPendingAt: await nextPendingAt(q, destinationId), nextProbeAt: null };
    const probeAt = health.nextProbeAt ?? now;
    if (probeAt > now)
      return { deliveries: [], nextPendingAt: await nextPendingAt(q, destinationId), nextProbeAt: probeAt };
    // The oldest pending delivery, due or not: a held delivery waits for the circuit, not its
    // backoff. One claimed for the first time takes the destination's next sequence (the row is
    // locked above), as in `claimDue`.
    const picked = await q.query(
      `WITH picked AS (
         SELECT id, sequence FROM deliveries WHERE destination_id = $1 AND status = 'pending'
         ORDER BY next_attempt_at, seq LIMIT 1 FOR UPDATE SKIP LOCKED
       ), held AS (
         UPDATE destinations SET health_next_probe_at = $3,
           next_sequence = next_sequence + (SELECT count(*) FROM picked WHERE sequence IS NULL)
         WHERE id = $1 AND EXISTS (SELECT 1 FROM picked)
         RETURNING next_sequence - 1 AS taken
       ), claimed AS (
         UPDATE deliveries d SET status = 'queued', claimed_at = $2, updated_at = $2,
           sequence = coalesce(d.sequence, (SELECT taken FROM held))
         FROM picked p WHERE d.id = p.id
         RETURNING d.id, d.event_id, d.sequence, d.attempts, d.attempt_base
       )
       SELECT c.id, c.event_id, c.sequence, c.attempts, c.attempt_base, e.type, e.payload, e.created_at
       FROM claimed c JOIN events e ON e.id = c.event_id`,
      [destinationId, now, holdUntil],
    );
    const deliveries = picked.map((r) => ({ ...claimedFromRow(r, destinationId), probe: true }));
    return {
      deliveries,
      nextPendingAt: await nextPendingAt(q, destinationId),
      nextProbeAt: deliveries.length > 0 ? holdUntil : probeAt,
    };
  });
}

export async function resetHealth(db: Db, destinationId: string, now: number): Promise<HealthChange | null> {
  return db.tx(async (q) => {
    const row = live((await q.query(DESTINATION_BY_ID_FOR_UPDATE, [destinationId]))[0]);
    if (!row) return null;
    const before = healthFromRow(row);
    const after: Health = {
      ...HEALTHY,
      since: before.state === 'healthy' ? before.since : now,
      lastErrorClass: before.lastErrorClass,
    };
    await q.query(
      `UPDATE destinations SET health_state = 'healthy', health_state_before = $2, health_since = $3,
         health_consecutive_failures = 0, health_window_start = 0, health_window_attempts = 0,
         health_window_failures = 0, health_probe_failures = 0, health_next_probe_at = NULL,
         health_suspend_reason = NULL
       WHERE id = $1`,
      [destinationId, before.state, after.since],
    );
    if (before.state === 'healthy') return null;
    if (before.state === 'suspended')
      await emitNotices(q, [recoveredNotice(row.tenant_id as string, destinationId, before.since, now)], now);
    await q.query(
      `INSERT INTO destination_health_transitions
         (destination_id, at, from_state, to_state, reason, consecutive_failures, error_class)
       VALUES ($1, $2, $3, 'healthy', 'operator', $4, $5)`,
      [destinationId, now, before.state, before.consecutiveFailures, before.lastErrorClass],
    );
    return { destinationId, from: before.state, health: after };
  });
}

export async function healthTransitions(
  db: Queryable,
  destinationId: string,
  limit: number,
): Promise<HealthTransition[]> {
  const rows = await db.query(
    'SELECT * FROM destination_health_transitions WHERE destination_id = $1 ORDER BY id DESC LIMIT $2',
    [destinationId, limit],
  );
  return rows.map(transitionFromRow);
}

export async function healthCounts(db: Queryable): Promise<Record<HealthState, number>> {
  const counts = Object.fromEntries(HEALTH_STATES.map((state) => [state, 0])) as Record<HealthState, number>;
  const rows = await db.query(
    'SELECT health_state, count(*) AS n FROM destinations WHERE deleted_at IS NULL GROUP BY health_state',
  );
  for (const r of rows) counts[r.health_state as HealthState] = Number(r.n);
  return counts;
}
