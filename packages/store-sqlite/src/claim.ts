/**
 * The tick's claim on SQLite, and the per-destination sequence it hands out (docs/adr/0006).
 *
 * A delivery has no sequence until it is first claimed (the column holds 0 then: SQLite keeps
 * 0003's NOT NULL DEFAULT 0, and the shared row mapper reads 0 as null). The claim gives the
 * deliveries it takes for the first time the destination's next numbers, in claim order, and
 * bumps `destinations.next_sequence` once by their count, in the claim's transaction; a
 * delivery that already has one keeps it. node:sqlite runs one transaction at a time in this
 * process, so two claims never interleave and the numbers are contiguous.
 */

import type { StatementSync } from 'node:sqlite';
import type { ClaimOrder } from '@sluice/core';
import { type Claim, claimedFromRow } from '@sluice/store';

export interface ClaimSql {
  sql(text: string): StatementSync;
}

type Row = Record<string, unknown>;

const COLUMNS = 'd.id, d.event_id, d.sequence, d.attempts, d.attempt_base, e.type, e.payload, e.created_at';
const DUE = "d.destination_id = ? AND d.status = 'pending' AND d.next_attempt_at <= ?";

/**
 * Up to `max` due rows in claim order. `due`: due time, then insertion (`deliveries_due`).
 * `sequence` (fifo): the numbered rows (retries, replays) by sequence, then the unnumbered
 * ones (first attempts) in insertion order — two reads of `deliveries_sequence`
 * (destination_id, sequence), whose order within sequence 0 is rowid order.
 */
function dueRows(s: ClaimSql, destinationId: string, max: number, now: number, order: ClaimOrder): Row[] {
  const from = `FROM deliveries d JOIN events e ON e.id = d.event_id WHERE ${DUE}`;
  if (order === 'due') {
    return s
      .sql(`SELECT ${COLUMNS} ${from} ORDER BY d.next_attempt_at, d.rowid LIMIT ?`)
      .all(destinationId, now, max);
  }
  const numbered = s
    .sql(`SELECT ${COLUMNS} ${from} AND d.sequence > 0 ORDER BY d.sequence LIMIT ?`)
    .all(destinationId, now, max);
  if (numbered.length >= max) return numbered;
  // `+d.next_attempt_at`: the due filter must not pick `deliveries_due`, which would sort the
  // whole due backlog by rowid; `deliveries_sequence` gives rowid order within sequence 0.
  const first = s
    .sql(`SELECT ${COLUMNS} ${from.replace('d.next_attempt_at', '+d.next_attempt_at')} AND d.sequence = 0
          ORDER BY d.rowid LIMIT ?`)
    .all(destinationId, now, max - numbered.length);
  return [...numbered, ...first];
}

/**
 * Gives each unnumbered row of `rows`, in their order, the destination's next sequence: one
 * bump of its counter by their count. False when the destination has no row (nothing to
 * number from: such deliveries are not claimed, as in the Postgres store).
 */
export function numberRows(s: ClaimSql, destinationId: string, rows: Row[]): boolean {
  const fresh = rows.filter((r) => r.sequence === 0);
  if (fresh.length === 0) return true;
  const taken = s
    .sql(
      'UPDATE destinations SET next_sequence = next_sequence + ? WHERE id = ? RETURNING next_sequence - ? AS first',
    )
    .get(fresh.length, destinationId, fresh.length);
  if (taken === undefined) return false;
  let next = taken.first as number;
  for (const r of fresh) r.sequence = next++;
  return true;
}

/** One tick's claim, inside the caller's transaction (the turn's batch of claims). */
export function claimDue(
  s: ClaimSql,
  destinationId: string,
  max: number,
  now: number,
  order: ClaimOrder,
): Claim {
  let rows = max <= 0 ? [] : dueRows(s, destinationId, max, now, order);
  if (!numberRows(s, destinationId, rows)) rows = [];
  if (rows.length > 0) {
    s.sql(
      `UPDATE deliveries SET status = 'queued', claimed_at = ?, updated_at = ?, sequence = j.value ->> 1
         FROM json_each(?) j WHERE deliveries.id = j.value ->> 0`,
    ).run(now, now, JSON.stringify(rows.map((r) => [r.id, r.sequence])));
  }
  const next = s
    .sql(
      `SELECT next_attempt_at FROM deliveries WHERE destination_id = ? AND status = 'pending'
         ORDER BY next_attempt_at LIMIT 1`,
    )
    .get(destinationId);
  return {
    deliveries: rows.map((r) => claimedFromRow(r, destinationId)),
    nextPendingAt: next ? (next.next_attempt_at as number) : null,
  };
}
