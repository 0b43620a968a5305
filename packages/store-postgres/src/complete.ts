/**
 * Completions on Postgres: the attempts recorded, their deliveries moved on, and each
 * destination's endpoint health folded forward (docs/adr/0007), in one statement, so one
 * round trip per batch and atomic however many workers write at once.
 *
 * The health update is @sluice/core's `nextHealth` written in SQL (`HEALTH`, below): the
 * UPDATE re-reads a row another batch changed meanwhile (READ COMMITTED re-evaluates its SET
 * on the new version), so concurrent batches never lose each other's failures. The
 * conformance suite checks the two agree. A destination whose batch changes nothing a
 * reader sees (`healthMoves`: successes on a clean destination) is not written: the hot
 * path costs no row lock on the destination.
 *
 * It runs on the generic-plan pool (`Db.generic`), and every row it touches is found by its
 * key, however few rows the tables held when the plan was made. A plan made on the store's
 * own choice reads the destinations with a sequential scan and the deliveries through a
 * bitmap of the whole `deliveries_claimed` index, which holds an entry for every version a
 * claim wrote until a vacuum (docs/performance.md, Decisions). So the statuses a completion
 * may move come as a parameter ($35), which no plan can match to that partial index, and the
 * pool plans no sequential scan; `batched.test.ts` checks the plan.
 */

import {
  type ClassifiedResult,
  classifyAttempt,
  DEFAULT_HEALTH_POLICY,
  type HealthPolicy,
  type HealthState,
  isBreakerClass,
  sourcesOf,
  summarize,
} from '@sluice/core';
import {
  type CompletedAttempt,
  type CompletionChanges,
  completionNotices,
  healthFromRow,
  type MovedDestination,
} from '@sluice/store';
import type { Db, Queryable, Row } from './db.ts';
import { emitNotices } from './operational.ts';

// $1 now; the batch's per-destination summary is `s`, the row before the write `d`.
// Policy: $28 degradeAfter, $29 suspendAfter, $30 windowMs, $31 windowMinAttempts,
// $32 windowFailurePercent, $33 probeInitialMs, $34 probeMaxMs. $35 the statuses a
// completion moves a delivery out of (MOVABLE). $36 windowSuspendPercent. $37 each update's
// attempt was a probe.
const closing = `(s.successes > 0 AND d.health_state = 'suspended')`;
const windowOpen = `(d.health_window_failures > 0 AND $1 < d.health_window_start + $30::bigint)`;
const keep = `(NOT ${closing} AND ${windowOpen})`;
const fresh = `(NOT ${closing} AND NOT ${windowOpen} AND s.failures > 0)`;
const windowStart = `(CASE WHEN ${keep} THEN d.health_window_start WHEN ${fresh} THEN $1 ELSE 0 END)`;
const windowAttempts = `(CASE WHEN ${keep} THEN d.health_window_attempts + s.attempts WHEN ${fresh} THEN s.attempts ELSE 0 END)`;
const windowFailures = `(CASE WHEN ${keep} THEN d.health_window_failures + s.failures WHEN ${fresh} THEN s.failures ELSE 0 END)`;
const consecutive = `(CASE WHEN s.successes > 0 THEN s.trail ELSE d.health_consecutive_failures + s.failures END)`;
const windowOver = (percent: string) =>
  `(${windowAttempts} >= $31::int AND ${windowFailures} * 100 >= ${percent}::int * ${windowAttempts})`;
const inARow = `(${consecutive} >= $29::int)`;
const level = `(CASE WHEN ${inARow} OR ${windowOver('$36')} THEN 'suspended' WHEN ${consecutive} >= $28::int OR ${windowOver('$32')} THEN 'degraded' ELSE 'healthy' END)`;
const rank = (state: string) => `(CASE ${state} WHEN 'healthy' THEN 0 WHEN 'degraded' THEN 1 ELSE 2 END)`;
const state = `(CASE WHEN s.successes > 0 OR ${rank(level)} > ${rank('d.health_state')} THEN ${level} ELSE d.health_state END)`;
const probeFailures = `(CASE WHEN ${state} <> 'suspended' OR d.health_state <> 'suspended' THEN 0
  ELSE d.health_probe_failures + (s.failed_probes > 0)::int END)`;
const nextProbeAt = `(CASE WHEN ${state} <> 'suspended' THEN NULL
  WHEN d.health_state <> 'suspended' THEN $1 + least($34::bigint, $33::bigint)
  WHEN s.failed_probes > 0 THEN ($1 + least($34::float8, $33::float8 * power(2, ${probeFailures})))::bigint
  ELSE d.health_next_probe_at END)`;
const suspendReason = `(CASE WHEN ${state} <> 'suspended' THEN NULL
  WHEN d.health_state <> 'suspended' THEN (CASE WHEN ${inARow} THEN 'consecutive' ELSE 'failure_rate' END)
  ELSE d.health_suspend_reason END)`;
const moves = `(s.failures > 0 OR s.failed_probes > 0 OR s.gone
  OR (s.successes > 0 AND (d.health_consecutive_failures > 0 OR d.health_state <> 'healthy' OR ${windowOpen})))`;
const goneNow = `(s.gone AND d.state = 'active')`;

const HEALTH = `
  UPDATE destinations d SET
    health_state = ${state},
    health_state_before = d.health_state,
    health_since = CASE WHEN ${state} <> d.health_state THEN $1 ELSE d.health_since END,
    health_consecutive_failures = ${consecutive},
    health_window_start = ${windowStart},
    health_window_attempts = ${windowAttempts},
    health_window_failures = ${windowFailures},
    health_probe_failures = ${probeFailures},
    health_next_probe_at = ${nextProbeAt},
    health_last_error_class = coalesce(s.last_class, d.health_last_error_class),
    health_suspend_reason = ${suspendReason},
    state = CASE WHEN ${goneNow} THEN 'disabled' ELSE d.state END,
    disabled_reason = CASE WHEN ${goneNow} THEN 'gone' ELSE d.disabled_reason END,
    updated_at = CASE WHEN ${goneNow} THEN $1 ELSE d.updated_at END
  FROM unnest($20::text[], $21::int[], $22::int[], $23::int[], $24::int[], $25::int[], $26::text[], $27::bool[])
    AS s(id, attempts, failures, successes, trail, failed_probes, last_class, gone)
  WHERE d.id = s.id AND ${moves}
  RETURNING d.*, s.failed_probes`;

/** `isHeld` of @sluice/core, in SQL. */
const held = `(u.breaker AND (u.probe OR h.health_state IN ('degraded', 'suspended')))`;

/**
 * The statuses an attempt's outcome moves a delivery out of; any other is settled or
 * cancelled.
 */
const MOVABLE = sourcesOf('succeed', 'retry', 'disable', 'exhaust');

const COMPLETE = `
  WITH recorded AS (
    INSERT INTO attempts (id, delivery_id, destination_id, attempt, started_at, finished_at, status_code,
      error_code, error_message, response_excerpt)
    SELECT * FROM unnest($2::text[], $3::text[], $4::text[], $5::int[], $6::bigint[], $7::bigint[],
      $8::int[], $9::text[], $10::text[], $11::text[])
    ON CONFLICT (id) DO NOTHING
  ), health AS (${HEALTH}
  ), logged AS (
    INSERT INTO destination_health_transitions
      (destination_id, at, from_state, to_state, reason, consecutive_failures, error_class)
    SELECT id, $1, health_state_before, health_state,
      CASE WHEN ${rank('health_state')} > ${rank('health_state_before')} THEN 'failures' ELSE 'success' END,
      health_consecutive_failures, health_last_error_class
    FROM health WHERE health_state <> health_state_before
  ), moved AS (
    UPDATE deliveries d SET
      status = CASE WHEN ${held} THEN 'pending' ELSE u.status END,
      attempts = u.attempt,
      attempt_base = d.attempt_base + CASE WHEN ${held} THEN 1 ELSE 0 END,
      next_attempt_at = CASE WHEN NOT ${held} THEN u.next_attempt_at
        WHEN h.health_state = 'suspended' THEN $1 ELSE coalesce(u.next_attempt_at, u.hold_at, $1) END,
      last_error = u.last_error, claimed_at = NULL, updated_at = $1
    FROM unnest($12::text[], $13::text[], $14::int[], $15::bigint[], $16::text[], $17::bool[], $18::bigint[],
        $19::text[], $37::bool[])
        AS u(id, status, attempt, next_attempt_at, last_error, breaker, hold_at, destination_id, probe)
      LEFT JOIN health h ON h.id = u.destination_id
    WHERE d.id = u.id AND d.status = ANY($35::text[])
  )
  SELECT * FROM health`;

/**
 * Records the attempts and moves their deliveries on, in one statement. Only a delivery
 * still `queued`/`delivering` moves: a completion never resurrects a cancelled or settled one.
 *
 * Safe to repeat: the completion writer retries a batch whose write failed, and a commit
 * whose answer was lost would otherwise fail forever on the attempts' primary key. A repeated
 * attempt is skipped (`ON CONFLICT DO NOTHING`) and its delivery has already moved (its
 * results are folded into the health a second time: at worst a failure counted twice).
 */
export async function completeAttempts(
  db: Pick<Db, 'generic' | 'tx'>,
  completed: CompletedAttempt[],
  now: number,
  policy: HealthPolicy = DEFAULT_HEALTH_POLICY,
): Promise<CompletionChanges> {
  if (completed.length === 0) return [];
  const attempts = completed.map((c) => c.attempt);
  const classOf = (c: CompletedAttempt) => classifyAttempt(c.attempt.statusCode, c.attempt.errorCode);
  // One update per delivery, the first completion's: as in a sequential store, where the
  // first moves it out of `queued` and the rest find nothing to move.
  const moves = new Map<string, CompletedAttempt>();
  for (const c of completed) if (!moves.has(c.attempt.deliveryId)) moves.set(c.attempt.deliveryId, c);
  // In id order: two batches that share deliveries (a lease expired and another worker took
  // one) then lock them in one order under the usual plan for a batch (a nested loop over the
  // list), so they wait on each other instead of deadlocking. Destinations likewise.
  const updates = [...moves.values()].sort((a, b) => (a.attempt.deliveryId < b.attempt.deliveryId ? -1 : 1));
  const results = new Map<string, ClassifiedResult[]>();
  for (const c of completed) {
    const list = results.get(c.attempt.destinationId) ?? [];
    list.push({ errorClass: classOf(c), probe: c.probe === true, gone: c.disableDestination });
    results.set(c.attempt.destinationId, list);
  }
  const ids = [...results.keys()].sort();
  const batches = ids.map((id) => summarize(results.get(id) ?? []));
  const params = [
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
    updates.map((c) => isBreakerClass(classOf(c))),
    updates.map((c) => c.holdAt ?? null),
    updates.map((c) => c.attempt.destinationId),
    ids,
    batches.map((b) => b.attempts),
    batches.map((b) => b.failures),
    batches.map((b) => b.successes),
    batches.map((b) => b.trailingFailures),
    batches.map((b) => b.failedProbes),
    batches.map((b) => b.lastErrorClass),
    batches.map((b) => b.gone),
    policy.degradeAfter,
    policy.suspendAfter,
    policy.windowMs,
    policy.windowMinAttempts,
    policy.windowFailurePercent,
    policy.probeInitialMs,
    policy.probeMaxMs,
    MOVABLE,
    policy.windowSuspendPercent,
    updates.map((c) => c.probe === true),
  ];
  // Only a failure, a probe or a 410 can open a circuit, disable a destination or kill a
  // delivery: such a batch runs in a transaction with its operational events. A batch of
  // successes (the hot path) stays one statement, one round trip.
  const eventful = completed.some(
    (c) => c.status !== 'delivered' || c.probe === true || c.disableDestination,
  );
  if (!eventful) {
    const rows = await db.generic.query(COMPLETE, params);
    const changes = changesOf(rows);
    // A success closes a circuit without a probe only when its request was in flight as the
    // circuit opened (rare): its `recovered` follows the commit, keyed so a repeat adds none.
    // The batch is committed: a failure here must not make the writer run it again (it would
    // count its outcomes twice), so the `recovered` is then lost, the one such window (design.md).
    if (rows.some(recovered)) {
      const notified = await db
        .tx((q) => notify(q, completed, rows, new Set(), now))
        .catch((): string[] => []);
      if (notified.length > 0) changes.notified = notified;
    }
    return changes;
  }
  return db.tx(async (q) => {
    const gone = [
      ...new Set(completed.filter((c) => c.disableDestination).map((c) => c.attempt.destinationId)),
    ];
    // Locked in id order, as the statement locks them: of two batches with a 410 for one
    // destination, the second sees it disabled already and tells nothing.
    const active =
      gone.length === 0
        ? []
        : await q.query(
            "SELECT id FROM destinations WHERE id = ANY($1::text[]) AND state = 'active' ORDER BY id FOR UPDATE",
            [gone.sort()],
          );
    const rows = await q.query(COMPLETE, params);
    const changes = changesOf(rows);
    const notified = await notify(q, completed, rows, new Set(active.map((r) => r.id as string)), now);
    if (notified.length > 0) changes.notified = notified;
    return changes;
  }, true);
}

const recovered = (r: Row): boolean =>
  r.health_state_before === 'suspended' && r.health_state !== 'suspended';

function changesOf(rows: Row[]): CompletionChanges {
  return rows
    .filter((r) => r.health_state !== r.health_state_before || Number(r.failed_probes) > 0)
    .map((r) => ({
      destinationId: r.id as string,
      from: r.health_state_before as HealthState,
      health: healthFromRow(r),
    }));
}

/**
 * The batch's operational events (`completionNotices`), accepted with `q`. `rows`: the
 * destinations the statement moved (the row after); `wasActive`: those a 410 of the batch
 * found active. A recovered one's suspension began at its last transition to `suspended`.
 */
async function notify(
  q: Queryable,
  completed: CompletedAttempt[],
  rows: Row[],
  wasActive: ReadonlySet<string>,
  now: number,
): Promise<string[]> {
  const back = rows.filter(recovered).map((r) => r.id as string);
  const since = new Map<string, number>();
  if (back.length > 0) {
    const found = await q.query(
      `SELECT DISTINCT ON (destination_id) destination_id, at FROM destination_health_transitions
       WHERE destination_id = ANY($1::text[]) AND to_state = 'suspended' ORDER BY destination_id, id DESC`,
      [back],
    );
    for (const r of found) since.set(r.destination_id as string, Number(r.at));
  }
  const moved: MovedDestination[] = rows.map((r) => ({
    destinationId: r.id as string,
    tenantId: r.tenant_id as string,
    from: r.health_state_before as HealthState,
    health: healthFromRow(r),
    suspendedSince: since.get(r.id as string) ?? null,
    disabled: wasActive.has(r.id as string) && r.state === 'disabled',
  }));
  const notices = completionNotices(completed, moved, now);
  return notices.length === 0 ? [] : emitNotices(q, notices, now);
}

/**
 * Postgres text cannot hold U+0000, and these strings come from the outside (a receiver's
 * body, an error message): one NUL would fail the whole batch, again on every retry. It
 * becomes U+FFFD, as an undecodable byte already does.
 */
function text(value: string | null): string | null {
  return value === null ? null : value.replaceAll('\u0000', '\uFFFD');
}
