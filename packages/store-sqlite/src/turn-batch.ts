/**
 * Group commit: the calls of one kind made in one turn of the event loop run in one
 * transaction, each in a savepoint of its own, so one call's failure leaves the others'
 * writes in place. Every caller is answered after the commit, never before (the API answers
 * an accept only once it is committed; a tick publishes only what its committed claim took).
 *
 * Under load the calls arrive together while a commit holds the loop, so the batches grow
 * just when commits would queue up; alone, a call waits only for `setImmediate`. The single
 * box's hot writes use it: the API's accepts (one durable commit, one fsync, per turn) and
 * the ticks' claims (the ticks that fall due together share one commit).
 */

import type { DatabaseSync } from 'node:sqlite';

interface Call<A, R> {
  args: A;
  resolve(result: R): void;
  reject(err: unknown): void;
}

export interface TurnBatchOptions<A, R> {
  db: DatabaseSync;
  /** The transaction the batch runs in (`tx` or `progressTx`). */
  tx: (fn: () => void) => void;
  /** One call's writes; throws to roll back that call alone. */
  one: (args: A) => R;
  /**
   * When the batch runs. Default `setImmediate`: after this turn's I/O, so the calls of all
   * the requests read in one turn share it. `process.nextTick`: at the end of the current
   * task, once its promise chains have run as far as they can — the ticks started by one
   * timer all get there, and none waits behind the next turn's I/O.
   */
  defer?: (run: () => void) => void;
}

export class TurnBatch<A, R> {
  private calls: Call<A, R>[] = [];
  private readonly options: TurnBatchOptions<A, R>;

  constructor(options: TurnBatchOptions<A, R>) {
    this.options = options;
  }

  run(args: A): Promise<R> {
    return new Promise((resolve, reject) => {
      this.calls.push({ args, resolve, reject });
      if (this.calls.length === 1) (this.options.defer ?? setImmediate)(this.commit);
    });
  }

  /** Runs what is waiting now (also before the database closes). */
  readonly commit = (): void => {
    const batch = this.calls;
    if (batch.length === 0) return;
    this.calls = [];
    const { db, tx, one } = this.options;
    const settled: (() => void)[] = [];
    try {
      tx(() => {
        for (const { args, resolve, reject } of batch) {
          db.exec('SAVEPOINT call');
          try {
            const result = one(args);
            db.exec('RELEASE call');
            settled.push(() => resolve(result));
          } catch (err) {
            // SQLite rolled the whole transaction back (a full disk, an I/O error): every call fails.
            if (!db.isTransaction) throw err;
            db.exec('ROLLBACK TO call');
            db.exec('RELEASE call');
            settled.push(() => reject(err));
          }
        }
      });
    } catch (err) {
      for (const { reject } of batch) reject(err);
      return;
    }
    for (const settle of settled) settle();
  };
}
