/**
 * The claim of due deliveries on Postgres, for many destinations in one statement.
 *
 * A rate limiter runs the ticks it claims from the schedule side by side; each asks the store
 * for its destination's due deliveries. One statement per tick would cost a round trip, a
 * snapshot and a commit each — most of Postgres' work per delivery at light load. `ClaimBatcher`
 * gathers the claims asked for in one turn of the event loop (DataLoader) and runs them as
 * one statement, so the cost per tick falls as the load rises.
 *
 * Locks, and why a batch cannot deadlock: a claim locks its destination's row before its
 * deliveries (as a completion batch does, and the probe claim), because it bumps the row's
 * `next_sequence`. A claim of one destination waits for that lock. A claim of many
 * takes the destination rows it can (`SKIP LOCKED`) and never waits on one: holding some
 * destination rows while waiting for another (locked by a completion batch that waits on one
 * of ours) would be a deadlock. A destination whose row was busy is claimed again on its own,
 * right after. Deliveries are taken `FOR UPDATE SKIP LOCKED` in both, so replicas never claim
 * one delivery twice and no claim waits on another.
 */

import type { ClaimOrder } from '@sluice/core';
import { type Claim, claimedFromRow, type PerTurn, perTurn } from '@sluice/store';
import type { Queryable, Row } from './db.ts';

interface ClaimRequest {
  destinationId: string;
  max: number;
  now: number;
  order: ClaimOrder;
}

/**
 * $1 destination ids, $2 most to claim of each, $3 their `now`s (unique ids). One statement:
 *
 * 1. `counter` locks the destinations' rows (all of them, waiting; or those it can, `SKIP
 *    LOCKED`, for a batch — see above);
 * 2. `picked` reads each locked destination's pending rows in claim order — `due`: due time,
 *    then insertion (`deliveries_due`); `sequence` (a fifo destination): the numbered ones by
 *    sequence, then the unnumbered ones in insertion order (`deliveries_fifo`, NULLs last) —
 *    and stops after its `max` rows it could lock;
 * 3. the picked rows without a sequence (first claims) take their destination's next numbers
 *    in claim order (`fresh_sequence`, from the locked row's `next_sequence`; `taken` bumps it
 *    once per destination, by their count); the others keep theirs (retries, replays,
 *    requeued deliveries) (docs/adr/0006);
 * 4. `next_pending` reads `deliveries_due` for each destination's earliest row left pending:
 *    the statement's snapshot still shows the claimed rows as pending, so they are left out
 *    (one hash of the picked ids). It is MATERIALIZED so it runs once per destination, not
 *    once per claimed row.
 *
 * Every join is shaped so that its cost does not depend on the planner's estimates (a
 * prepared statement's generic plan guesses one row per CTE): each updated row is found
 * by its key, from `picked` alone — a join of two CTEs there runs as a nested loop,
 * quadratic in the rows claimed.
 *
 * One row per claimed delivery and one with a null id per destination that claimed nothing;
 * every row names its destination, whether its row was locked, and its `next_pending_at`.
 */
function claimSql(orderBy: string, skipLocked: boolean): string {
  return `
  WITH req AS (
    SELECT * FROM unnest($1::text[], $2::int[], $3::bigint[]) AS r(destination_id, max, now)
  ), counter AS (
    SELECT d.id, d.next_sequence, r.max, r.now FROM destinations d JOIN req r ON r.destination_id = d.id
    WHERE d.id = ANY($1::text[])
    FOR NO KEY UPDATE OF d${skipLocked ? ' SKIP LOCKED' : ''}
  ), picked AS (
    SELECT p.*, c.next_sequence - 1 + row_number() OVER (
        PARTITION BY p.destination_id, p.sequence IS NULL ORDER BY ${orderBy}) AS fresh_sequence
    FROM counter c CROSS JOIN LATERAL (
      SELECT id, destination_id, sequence, next_attempt_at, seq, c.now AS claimed_at FROM deliveries
      WHERE destination_id = c.id AND status = 'pending' AND next_attempt_at <= c.now
      ORDER BY ${orderBy}
      LIMIT c.max
      FOR UPDATE SKIP LOCKED) p
  ), taken AS (
    UPDATE destinations d SET next_sequence = d.next_sequence + f.n
    FROM (SELECT destination_id, count(*) AS n FROM picked WHERE sequence IS NULL GROUP BY destination_id) f
    WHERE d.id = f.destination_id
  ), claimed AS (
    UPDATE deliveries d SET status = 'queued', claimed_at = p.claimed_at, updated_at = p.claimed_at,
      sequence = coalesce(d.sequence, p.fresh_sequence)
    FROM picked p
    WHERE d.id = p.id
    RETURNING d.id, d.destination_id, d.event_id, d.sequence, d.attempts, d.attempt_base, d.next_attempt_at, d.seq
  ), next_pending AS MATERIALIZED (
    SELECT r.destination_id, EXISTS (SELECT 1 FROM counter k WHERE k.id = r.destination_id) AS locked, (
      SELECT min(next_attempt_at) FROM deliveries
      WHERE destination_id = r.destination_id AND status = 'pending' AND id NOT IN (SELECT id FROM picked)) AS at
    FROM req r
  )
  SELECT n.destination_id AS requested, n.locked, n.at AS next_pending_at,
    c.id, c.event_id, c.sequence, c.attempts, c.attempt_base, e.type, e.payload, e.created_at
  FROM next_pending n
  LEFT JOIN claimed c ON c.destination_id = n.destination_id
  LEFT JOIN LATERAL (SELECT type, payload, created_at FROM events WHERE id = c.event_id LIMIT 1) e ON true
  ORDER BY n.destination_id, ${orderBy.replace(/(\w+)/g, 'c.$1')}`;
}

const ORDER_BY: Record<ClaimOrder, string> = { due: 'next_attempt_at, seq', sequence: 'sequence, seq' };

/** The claim statements: `one` waits for its destination's row, `many` skips busy rows. */
export const CLAIM_SQL: Record<ClaimOrder, { one: string; many: string }> = {
  due: { one: claimSql(ORDER_BY.due, false), many: claimSql(ORDER_BY.due, true) },
  sequence: { one: claimSql(ORDER_BY.sequence, false), many: claimSql(ORDER_BY.sequence, true) },
};

/**
 * Claims for several destinations in one statement (all of one order, each destination
 * once). A claim whose destination row was busy comes back as undefined: claim it alone.
 */
async function claimMany(
  db: Queryable,
  requests: readonly ClaimRequest[],
  order: ClaimOrder,
): Promise<(Claim | undefined)[]> {
  const sql = requests.length === 1 ? CLAIM_SQL[order].one : CLAIM_SQL[order].many;
  const rows = await db.query(sql, [
    requests.map((r) => r.destinationId),
    requests.map((r) => Math.max(0, r.max)),
    requests.map((r) => r.now),
  ]);
  const byDestination = new Map<string, Row[]>();
  for (const r of rows) {
    const id = r.requested as string;
    const list = byDestination.get(id);
    if (list) list.push(r);
    else byDestination.set(id, [r]);
  }
  return requests.map((req) => {
    const mine = byDestination.get(req.destinationId) ?? [];
    // A missing destination locks nothing either: it is claimed alone, which finds nothing.
    if (requests.length > 1 && mine[0]?.locked !== true) return undefined;
    return {
      deliveries: mine.filter((r) => r.id !== null).map((r) => claimedFromRow(r, req.destinationId)),
      nextPendingAt: (mine[0]?.next_pending_at as number | null | undefined) ?? null,
    };
  });
}

/**
 * Gathers the claims asked for in one turn of the event loop into as few statements as it
 * can: one per claim order, each destination once per statement (a second claim of one
 * destination in the same turn — not something a tick's lease allows, but cheap to keep
 * right — goes into a later statement, so the two never pick the same rows).
 *
 * `perTurn` (@sluice/store, DataLoader) does the gathering.
 */
export class ClaimBatcher {
  private readonly db: Queryable;
  /** Undefined: the destination's row was busy. */
  private readonly loader: PerTurn<ClaimRequest, Claim | undefined>;

  constructor(db: Queryable, maxBatch = 200) {
    this.db = db;
    this.loader = perTurn((requests) => runBatch(db, requests), maxBatch);
  }

  async claim(request: ClaimRequest): Promise<Claim> {
    const claim = await this.loader.load(request);
    if (claim) return claim;
    // Its destination row was busy: alone, the claim waits for it (and holds up no other).
    const [alone] = await claimMany(this.db, [request], request.order);
    return alone ?? { deliveries: [], nextPendingAt: null };
  }
}

async function runBatch(
  db: Queryable,
  requests: readonly ClaimRequest[],
): Promise<(Claim | undefined | Error)[]> {
  const results: (Claim | undefined | Error)[] = new Array(requests.length);
  // Rounds of distinct destinations, one statement per round and order.
  let left = requests.map((request, i) => ({ request, i }));
  while (left.length > 0) {
    const seen = new Set<string>();
    const round: typeof left = [];
    const later: typeof left = [];
    for (const item of left) {
      const key = item.request.destinationId;
      (seen.has(key) ? later : round).push(item);
      seen.add(key);
    }
    for (const order of ['due', 'sequence'] as const) {
      const mine = round.filter((item) => item.request.order === order);
      if (mine.length === 0) continue;
      try {
        const claims = await claimMany(
          db,
          mine.map((item) => item.request),
          order,
        );
        for (const [k, item] of mine.entries()) results[item.i] = claims[k];
      } catch (err) {
        for (const item of mine) results[item.i] = err instanceof Error ? err : new Error(String(err));
      }
    }
    left = later;
  }
  return results;
}
