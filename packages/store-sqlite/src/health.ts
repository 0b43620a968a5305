/**
 * The SQLite store's completions and endpoint health (docs/adr/0007). node:sqlite runs one
 * statement at a time in this process, so the health update is the pure `nextHealth` of
 * @sluice/core applied inside the completion transaction: read, fold, write, atomic.
 */

import type { StatementSync } from 'node:sqlite';
import {
  type ClassifiedResult,
  classifyAttempt,
  DEFAULT_HEALTH_POLICY,
  HEALTH_STATES,
  HEALTHY,
  type Health,
  type HealthPolicy,
  type HealthState,
  healthMoves,
  isHeld,
  nextHealth,
  sqlSourcesOf,
  summarize,
} from '@sluice/core';
import {
  type CompletedAttempt,
  type CompletionChanges,
  claimedFromRow,
  completionNotices,
  type HealthChange,
  type HealthTransition,
  healthFromRow,
  type MovedDestination,
  type ProbeClaim,
  recoveredNotice,
  transitionFromRow,
  transitionReason,
} from '@sluice/store';
import { numberRows } from './claim.ts';
import { emitNotices } from './operational.ts';

export interface HealthSql {
  sql(text: string): StatementSync;
  tx<T>(fn: () => T): T;
  progressTx<T>(fn: () => T): T;
}

const HEALTH_OF = 'SELECT * FROM destinations WHERE id = ? AND deleted_at IS NULL';

function writeHealth(s: HealthSql, id: string, before: HealthState, h: Health): void {
  s.sql(
    `UPDATE destinations SET health_state = ?, health_state_before = ?, health_since = ?,
       health_consecutive_failures = ?, health_window_start = ?, health_window_attempts = ?,
       health_window_failures = ?, health_probe_failures = ?, health_next_probe_at = ?,
       health_last_error_class = ?, health_suspend_reason = ?
     WHERE id = ?`,
  ).run(
    h.state,
    before,
    h.since,
    h.consecutiveFailures,
    h.windowStart,
    h.windowAttempts,
    h.windowFailures,
    h.probeFailures,
    h.nextProbeAt,
    h.lastErrorClass,
    h.suspendReason,
    id,
  );
}

function logTransition(s: HealthSql, t: HealthTransition): void {
  s.sql(
    `INSERT INTO destination_health_transitions
       (destination_id, at, from_state, to_state, reason, consecutive_failures, error_class)
     VALUES (?, ?, ?, ?, ?, ?, ?)`,
  ).run(t.destinationId, t.at, t.from, t.to, t.reason, t.consecutiveFailures, t.errorClass);
}

export function completeAttempts(
  s: HealthSql,
  completed: CompletedAttempt[],
  now: number,
  policy: HealthPolicy = DEFAULT_HEALTH_POLICY,
): CompletionChanges {
  if (completed.length === 0) return [];
  const results = new Map<string, ClassifiedResult[]>();
  for (const c of completed) {
    const list = results.get(c.attempt.destinationId) ?? [];
    list.push({
      errorClass: classifyAttempt(c.attempt.statusCode, c.attempt.errorCode),
      probe: c.probe === true,
      gone: c.disableDestination,
    });
    results.set(c.attempt.destinationId, list);
  }
  const insert = s.sql(
    `INSERT INTO attempts (id, delivery_id, destination_id, attempt, started_at, finished_at, status_code,
       error_code, error_message, response_excerpt)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  );
  const update = s.sql(
    `UPDATE deliveries SET status = ?, attempts = ?, attempt_base = attempt_base + ?, next_attempt_at = ?,
       last_error = ?, claimed_at = NULL, updated_at = ?
     WHERE id = ? AND status IN (${sqlSourcesOf('succeed', 'retry', 'disable', 'exhaust')})`,
  );
  const disable = s.sql(
    `UPDATE destinations SET state = 'disabled', disabled_reason = ?, updated_at = ?
     WHERE id = ? AND state = 'active'`,
  );
  return s.progressTx(() => {
    // Health first: an attempt is held when its destination is, or with this batch becomes,
    // degraded or suspended.
    const stateAfter = new Map<string, HealthState>();
    const changes: CompletionChanges = [];
    const moved = new Map<string, MovedDestination>();
    for (const [id, list] of results) {
      const row = s.sql(HEALTH_OF).get(id);
      if (!row) continue;
      const before = healthFromRow(row);
      const batch = summarize(list);
      stateAfter.set(id, before.state);
      if (!healthMoves(before, batch, now, policy) && !batch.gone) continue;
      const after = nextHealth(before, batch, now, policy);
      writeHealth(s, id, before.state, after);
      stateAfter.set(id, after.state);
      moved.set(id, {
        destinationId: id,
        tenantId: row.tenant_id as string,
        from: before.state,
        health: after,
        suspendedSince: before.state === 'suspended' ? before.since : null,
        disabled: false,
      });
      if (after.state !== before.state) {
        logTransition(s, {
          destinationId: id,
          at: now,
          from: before.state,
          to: after.state,
          reason: transitionReason(before.state, after.state),
          consecutiveFailures: after.consecutiveFailures,
          errorClass: after.lastErrorClass,
        });
      }
      if (after.state !== before.state || batch.failedProbes > 0)
        changes.push({ destinationId: id, from: before.state, health: after });
    }
    for (const c of completed) {
      const { attempt: a, disableDestination } = c;
      insert.run(
        a.id,
        a.deliveryId,
        a.destinationId,
        a.attempt,
        a.startedAt,
        a.finishedAt,
        a.statusCode,
        a.errorCode,
        a.errorMessage,
        a.responseExcerpt,
      );
      const error = a.errorCode ?? (c.status === 'delivered' ? null : `http_${a.statusCode}`);
      const state = stateAfter.get(a.destinationId) ?? 'healthy';
      if (isHeld(classifyAttempt(a.statusCode, a.errorCode), state, c.probe === true)) {
        const at = state === 'suspended' ? now : (c.nextAttemptAt ?? c.holdAt ?? now);
        update.run('pending', a.attempt, 1, at, error, now, a.deliveryId);
      } else {
        update.run(c.status, a.attempt, 0, c.nextAttemptAt, error, now, a.deliveryId);
      }
      if (disableDestination && Number(disable.run('gone', now, a.destinationId).changes) > 0) {
        const m = moved.get(a.destinationId);
        if (m !== undefined) m.disabled = true;
      }
    }
    // The batch's operational events, in its transaction: a transition is told exactly once.
    const notices = completionNotices(completed, [...moved.values()], now);
    const notified = notices.length === 0 ? [] : emitNotices(s, notices, now);
    if (notified.length > 0) changes.notified = notified;
    return changes;
  });
}

function nextPendingAt(s: HealthSql, destinationId: string): number | null {
  const next = s
    .sql(
      `SELECT next_attempt_at FROM deliveries WHERE destination_id = ? AND status = 'pending'
       ORDER BY next_attempt_at LIMIT 1`,
    )
    .get(destinationId);
  return next ? (next.next_attempt_at as number) : null;
}

export function claimProbe(s: HealthSql, destinationId: string, now: number, holdUntil: number): ProbeClaim {
  return s.progressTx(() => {
    const row = s.sql(HEALTH_OF).get(destinationId);
    const health = row ? healthFromRow(row) : HEALTHY;
    if (health.state !== 'suspended')
      return { deliveries: [], nextPendingAt: nextPendingAt(s, destinationId), nextProbeAt: null };
    const probeAt = health.nextProbeAt ?? now;
    const picked =
      probeAt > now
        ? undefined
        : s
            .sql(
              `SELECT d.id, d.event_id, d.sequence, d.attempts, d.attempt_base, e.type, e.payload, e.created_at
               FROM deliveries d JOIN events e ON e.id = d.event_id
               WHERE d.destination_id = ? AND d.status = 'pending'
               ORDER BY d.next_attempt_at, d.rowid LIMIT 1`,
            )
            .get(destinationId);
    if (picked === undefined)
      return { deliveries: [], nextPendingAt: nextPendingAt(s, destinationId), nextProbeAt: probeAt };
    // Claimed for the first time: it takes the destination's next sequence, as in `claimDue`.
    numberRows(s, destinationId, [picked]);
    s.sql(
      `UPDATE deliveries SET status = 'queued', claimed_at = ?, updated_at = ?, sequence = ? WHERE id = ?`,
    ).run(now, now, picked.sequence as number, picked.id as string);
    s.sql('UPDATE destinations SET health_next_probe_at = ? WHERE id = ?').run(holdUntil, destinationId);
    return {
      deliveries: [{ ...claimedFromRow(picked, destinationId), probe: true }],
      nextPendingAt: nextPendingAt(s, destinationId),
      nextProbeAt: holdUntil,
    };
  });
}

export function resetHealth(s: HealthSql, destinationId: string, now: number): HealthChange | null {
  return s.tx(() => {
    const row = s.sql(HEALTH_OF).get(destinationId);
    if (!row) return null;
    const before = healthFromRow(row);
    const after: Health = {
      ...HEALTHY,
      since: before.state === 'healthy' ? before.since : now,
      lastErrorClass: before.lastErrorClass,
    };
    writeHealth(s, destinationId, before.state, after);
    if (before.state === 'healthy') return null;
    if (before.state === 'suspended')
      emitNotices(s, [recoveredNotice(row.tenant_id as string, destinationId, before.since, now)], now);
    logTransition(s, {
      destinationId,
      at: now,
      from: before.state,
      to: 'healthy',
      reason: 'operator',
      consecutiveFailures: before.consecutiveFailures,
      errorClass: before.lastErrorClass,
    });
    return { destinationId, from: before.state, health: after };
  });
}

export function healthTransitions(s: HealthSql, destinationId: string, limit: number): HealthTransition[] {
  return s
    .sql('SELECT * FROM destination_health_transitions WHERE destination_id = ? ORDER BY id DESC LIMIT ?')
    .all(destinationId, limit)
    .map(transitionFromRow);
}

export function healthCounts(s: HealthSql): Record<HealthState, number> {
  const counts = Object.fromEntries(HEALTH_STATES.map((state) => [state, 0])) as Record<HealthState, number>;
  for (const r of s
    .sql(
      'SELECT health_state, count(*) AS n FROM destinations WHERE deleted_at IS NULL GROUP BY health_state',
    )
    .all())
    counts[r.health_state as HealthState] = Number(r.n);
  return counts;
}
