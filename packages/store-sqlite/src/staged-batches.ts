/**
 * A batch accepted in slices (`AcceptOptions.slices`: the bulk lane asks for it while other
 * requests come in, api/bulk-lane.ts). In one transaction a 1,000-event batch holds the single
 * box's one writer, and its one main thread, for the ~20 ms its rows and their index entries
 * take; in slices, other tenants' accepts, claims and completions run between them. Still all
 * or nothing, and durable before the answer:
 *
 *   1. stage: the events and deliveries go to staged_events and staged_deliveries (no index
 *      but the batch's), SLICE events a transaction, each commit not waiting for the disk;
 *   2. decide: one durable write marks the batch decided, and its sync covers the staged
 *      frames before it (the WAL is written in order). From here the batch is accepted;
 *   3. move: SLICE events a transaction into events and deliveries, each with its
 *      deliveries, each slice deleting what it moved. The answer follows the last slice, so
 *      a read after it sees every event.
 *
 * A failure before the decision drops what was staged and fails the batch: nothing is
 * accepted. After it (a full disk) the batch still answers, since it is durable, and the move
 * is retried every second; the next start (`recoverStagedBatches`) moves what a stop or a
 * crash left and drops an undecided batch's rows. A staged idempotency key is reserved in
 * memory (one process holds the file): an accept with it waits for the batch, then replays
 * it, or fails if the store closes before the batch is moved.
 */

import { randomUUID } from 'node:crypto';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { newId } from '@sluice/core';
import { type AcceptResult, type NewEvent, StoreUnavailableError } from '@sluice/store';
import { acceptedWithKey } from './accept.ts';
import type { Sql } from './lists.ts';

/** Events staged, or rows moved, in one transaction. */
const SLICE = 100;
/** How soon a decided batch's move is tried again after it failed. */
const MOVE_RETRY_MS = 1_000;

export interface StagingSql extends Pick<Sql, 'sql'> {
  tx<T>(fn: () => T): T;
  progressTx<T>(fn: () => T): T;
}

/** The last event of the batch's next slice (null: nothing left). */
const SLICE_END = `SELECT max(seq) AS last FROM
  (SELECT seq FROM staged_events WHERE batch_id = ? ORDER BY seq LIMIT ?)`;
const MOVE_EVENTS = `INSERT INTO events (id, tenant_id, type, payload, idempotency_key, created_at)
  SELECT id, tenant_id, type, payload, idempotency_key, created_at FROM staged_events
  WHERE batch_id = ? AND seq <= ? ORDER BY seq`;
const MOVE_DELIVERIES = `INSERT INTO deliveries (id, event_id, destination_id, tenant_id, status, attempts,
    next_attempt_at, created_at, updated_at)
  SELECT id, event_id, destination_id, tenant_id, 'pending', 0, created_at, created_at, created_at
  FROM staged_deliveries WHERE batch_id = ? AND event_seq <= ? ORDER BY event_seq, seq`;

/**
 * Moves the batch's next SLICE events, each with its deliveries, in one transaction (an event
 * is never in place without them); false once nothing is left (the batch's row gone too).
 */
function moveSlice(db: StagingSql, batchId: string): boolean {
  return db.progressTx(() => {
    const last = db.sql(SLICE_END).get(batchId, SLICE)?.last;
    if (last === null || last === undefined) {
      db.sql('DELETE FROM staged_deliveries WHERE batch_id = ?').run(batchId);
      db.sql('DELETE FROM staged_batches WHERE id = ?').run(batchId);
      return false;
    }
    db.sql(MOVE_EVENTS).run(batchId, last);
    db.sql(MOVE_DELIVERIES).run(batchId, last);
    db.sql('DELETE FROM staged_events WHERE batch_id = ? AND seq <= ?').run(batchId, last);
    db.sql('DELETE FROM staged_deliveries WHERE batch_id = ? AND event_seq <= ?').run(batchId, last);
    return true;
  });
}

function dropBatch(db: StagingSql, batchId: string): void {
  db.progressTx(() => {
    db.sql('DELETE FROM staged_events WHERE batch_id = ?').run(batchId);
    db.sql('DELETE FROM staged_deliveries WHERE batch_id = ?').run(batchId);
    db.sql('DELETE FROM staged_batches WHERE id = ?').run(batchId);
  });
}

/**
 * Staged events whose idempotency key an event in place holds already. The reservations keep
 * that from happening within a process; should it happen, a start must neither fail nor lose
 * an accepted event, so such an event is moved without its key.
 */
const CLASHING = `SELECT s.id FROM staged_events s JOIN events e
  ON e.tenant_id = s.tenant_id AND e.idempotency_key = s.idempotency_key WHERE s.batch_id = ?`;

/**
 * At start: a decided batch is moved whole, an undecided one's rows are dropped. Answers how
 * many staged events lost their idempotency key to an event in place (0 but for a bug).
 */
export function recoverStagedBatches(db: StagingSql): number {
  let clashing = 0;
  for (const row of db.sql('SELECT id, decided FROM staged_batches').all()) {
    const id = row.id as string;
    if (row.decided !== 1) {
      dropBatch(db, id);
      continue;
    }
    db.progressTx(() => {
      const cleared = db
        .sql(`UPDATE staged_events SET idempotency_key = NULL WHERE batch_id = ? AND id IN (${CLASHING})`)
        .run(id, id);
      clashing += Number(cleared.changes);
    });
    while (moveSlice(db, id));
  }
  return clashing;
}

export class StagedBatches {
  private readonly db: StagingSql;
  /** Idempotency keys being staged (`tenant\nkey`), each with its batch's end. */
  private readonly reserved = new Map<string, Promise<void>>();
  private readonly running = new Set<Promise<void>>();
  private closed = false;
  /** Runs the store's turn batch of accepts, so that its keys are in `events` before a lookup. */
  private readonly flush: () => void;

  constructor(db: StagingSql, flush: () => void) {
    this.db = db;
    this.flush = flush;
  }

  /**
   * Runs `act` once no staged batch holds one of these keys, in the same synchronous step as
   * the look that found them free: a key is only ever taken where no batch holds it. At once
   * (no promise in between) when none does now, as for nearly every accept.
   */
  afterKeys<T>(tenantId: string, events: readonly NewEvent[], act: () => Promise<T>): Promise<T> {
    const waits = new Set<Promise<void>>();
    for (const e of events) {
      const wait =
        e.idempotencyKey === null ? undefined : this.reserved.get(`${tenantId}\n${e.idempotencyKey}`);
      if (wait) waits.add(wait);
    }
    if (waits.size === 0) return act();
    return Promise.all(waits).then(() => this.afterKeys(tenantId, events, act));
  }

  accept(tenantId: string, events: NewEvent[], now: number): Promise<AcceptResult[]> {
    return this.afterKeys(tenantId, events, () => this.acceptNow(tenantId, events, now));
  }

  private async acceptNow(tenantId: string, events: NewEvent[], now: number): Promise<AcceptResult[]> {
    // From the look that found the keys free to the reservation nothing yields.
    this.flush();
    const { results, keys } = this.plan(tenantId, events);
    const batchId = randomUUID();
    let settle: (err?: Error) => void = () => undefined;
    const end = new Promise<void>((resolve, reject) => {
      settle = (err) => (err === undefined ? resolve() : reject(err));
    });
    end.catch(() => undefined); // its waiters see the failure; nobody else need
    for (const key of keys) this.reserved.set(key, end);
    // Moved (or never accepted): the keys are free. Decided but not moved when the store
    // closes: its waiters fail, since the key is the batch's, which the next start moves.
    const release = (err?: Error): void => {
      for (const key of keys) if (this.reserved.get(key) === end) this.reserved.delete(key);
      settle(err);
    };
    const staged = this.stage(batchId, tenantId, events, results, now).then(
      () => this.move(batchId, release),
      (err: unknown) => {
        release();
        throw err;
      },
    );
    this.running.add(staged);
    void staged.finally(() => this.running.delete(staged)).catch(() => undefined);
    await staged;
    return results;
  }

  /** The store's close waits for the batches being accepted; a move left over waits for the next start. */
  async close(): Promise<void> {
    this.closed = true;
    await Promise.allSettled(this.running);
  }

  /**
   * Each event's answer: a replay of the tenant's event with its key (in `events`, or earlier
   * in this batch), or a new event, its ids chosen now; and the keys this batch reserves.
   */
  private plan(tenantId: string, events: NewEvent[]) {
    const results: AcceptResult[] = [];
    const keys: string[] = [];
    const byKey = new Map<string, AcceptResult>();
    for (const event of events) {
      const key = event.idempotencyKey;
      if (key !== null) {
        const earlier = byKey.get(key) ?? acceptedWithKey(this.db, tenantId, key);
        if (earlier) {
          results.push({ event: earlier.event, replayed: true });
          byKey.set(key, earlier);
          continue;
        }
      }
      const id = newId('evt');
      const deliveries = event.destinationIds.map((destinationId) => ({ id: newId('dlv'), destinationId }));
      const result: AcceptResult = { event: { id, deliveries }, replayed: false };
      results.push(result);
      if (key !== null) {
        byKey.set(key, result);
        keys.push(`${tenantId}\n${key}`);
      }
    }
    return { results, keys };
  }

  private async stage(
    batchId: string,
    tenantId: string,
    events: NewEvent[],
    results: AcceptResult[],
    now: number,
  ): Promise<void> {
    const { db } = this;
    try {
      db.progressTx(() => {
        db.sql('INSERT INTO staged_batches (id, tenant_id, created_at) VALUES (?, ?, ?)').run(
          batchId,
          tenantId,
          now,
        );
      });
      for (let from = 0; from < events.length; from += SLICE) {
        await nextTurn();
        db.progressTx(() => {
          const insertEvent = db.sql(
            `INSERT INTO staged_events (batch_id, seq, id, tenant_id, type, payload, idempotency_key, created_at)
             VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
          );
          const insertDelivery = db.sql(
            `INSERT INTO staged_deliveries (batch_id, event_seq, seq, id, event_id, destination_id, tenant_id, created_at)
             VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
          );
          for (let i = from; i < Math.min(events.length, from + SLICE); i++) {
            const { event, replayed } = results[i] as AcceptResult;
            if (replayed) continue;
            const input = events[i] as NewEvent;
            insertEvent.run(
              batchId,
              i,
              event.id,
              tenantId,
              input.type,
              input.payload,
              input.idempotencyKey,
              now,
            );
            for (const [seq, d] of event.deliveries.entries())
              insertDelivery.run(batchId, i, seq, d.id, event.id, d.destinationId, tenantId, now);
          }
        });
      }
      await nextTurn();
      db.tx(() => {
        db.sql('UPDATE staged_batches SET decided = 1 WHERE id = ?').run(batchId);
      });
    } catch (err) {
      try {
        dropBatch(db, batchId);
      } catch {
        // Left for the next start, which drops an undecided batch.
      }
      throw err;
    }
  }

  /**
   * Moves a decided batch, then releases its keys. Answers once it is moved or its first try
   * failed: the batch is durable either way, and a failed move is tried again every
   * MOVE_RETRY_MS until it is done or the store closes (the next start moves it then).
   */
  private async move(batchId: string, release: (err?: Error) => void): Promise<void> {
    if (await this.moveOnce(batchId)) return release();
    void (async () => {
      while (!this.closed) {
        await new Promise((resolve) => setTimeout(resolve, MOVE_RETRY_MS).unref());
        if (!this.closed && (await this.moveOnce(batchId))) return release();
      }
      release(new StoreUnavailableError('the store closed before a batch was moved into place'));
    })();
  }

  private async moveOnce(batchId: string): Promise<boolean> {
    try {
      do await nextTurn();
      while (moveSlice(this.db, batchId));
      return true;
    } catch {
      return false;
    }
  }
}
