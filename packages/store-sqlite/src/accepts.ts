/**
 * The single box's accepts, both ways (`Store.acceptEvents`): the accepts of one turn share one
 * durable commit (one fsync, `turn-batch.ts`), and a batch asked for in `slices` is staged and
 * moved a slice a transaction (`staged-batches.ts`). An accept with an idempotency key that a
 * staged batch holds waits for that batch, then replays it.
 */

import type { DatabaseSync } from 'node:sqlite';
import type { AcceptOptions, AcceptResult, NewEvent } from '@sluice/store';
import { acceptOne } from './accept.ts';
import { StagedBatches, type StagingSql } from './staged-batches.ts';
import { TurnBatch } from './turn-batch.ts';

type PendingAccept = { tenantId: string; events: NewEvent[]; now: number };

export class Accepts {
  private readonly turn: TurnBatch<PendingAccept, AcceptResult[]>;
  private readonly staged: StagedBatches;

  constructor(store: StagingSql & { db: DatabaseSync }) {
    this.turn = new TurnBatch({
      db: store.db,
      tx: (fn) => store.tx(fn),
      one: ({ tenantId, events, now }: PendingAccept) =>
        events.map((event) => acceptOne(store, tenantId, event, now)),
    });
    this.staged = new StagedBatches(store, () => this.turn.commit());
  }

  accept(
    tenantId: string,
    events: NewEvent[],
    now: number,
    options?: AcceptOptions,
  ): Promise<AcceptResult[]> {
    if (options?.slices === true) return this.staged.accept(tenantId, events, now);
    return this.staged.afterKeys(tenantId, events, () => this.turn.run({ tenantId, events, now }));
  }

  /**
   * Before the database closes: the batches being staged or moved finish their try (one left
   * unmoved fails its waiters, and the next start moves it); what waits for this turn commits.
   */
  async close(): Promise<void> {
    await this.staged.close();
    this.turn.commit();
  }
}
