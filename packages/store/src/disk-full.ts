/**
 * Readiness while the disk is full (docs/operations.md "Readiness"). A store on a full disk
 * still answers reads, `SELECT 1` among them, but refuses the writes that need room: ingest
 * answers 503, and `/readyz` must say so, or a load balancer keeps sending it the writes it
 * refuses. Each store keeps one `DiskFull`, the same policy in both shapes:
 *
 * - an operation that fails because the disk is full (`isDiskFull`: SQLite's SQLITE_FULL,
 *   Postgres's 53100 `disk_full`) marks the store;
 * - while it is marked, `check` (which the store's `ping`, and so `/readyz`, awaits) makes
 *   the store's probe write, a row of `PROBE_BYTES` that replaces the last probe's, and
 *   rejects with a `StoreUnavailableError` that says the disk is full until a probe
 *   succeeds, which clears the mark.
 *
 * The probe clears it, not the next request: a replica out of the load balancer's rotation
 * gets no request to try. Unmarked, `check` costs nothing and writes nothing.
 */

import { isDiskFull, StoreUnavailableError } from './unavailable.ts';

/**
 * The room a probe write needs: a mebibyte, more than most turns' writes (a disk with less
 * room left is full for Sluice's purposes, and a probe that small writes would succeed
 * beside the writes that are refused).
 */
export const PROBE_BYTES = 1024 * 1024;

export class DiskFull {
  readonly #probe: () => Promise<void>;
  #marked = false;
  /** The probe on its way: readiness checks that meet it wait for it rather than write again. */
  #probing: Promise<void> | undefined;

  /** `probe`: a write that needs `PROBE_BYTES` of room and keeps nothing. */
  constructor(probe: () => Promise<void>) {
    this.#probe = probe;
  }

  /** Sees a failed operation's error (the caller rethrows it): a full disk marks the store. */
  observe(err: unknown): void {
    if (isDiskFull(err)) this.#marked = true;
  }

  /** Resolves while the store can write; rejects while its disk is full. */
  check(): Promise<void> {
    if (!this.#marked) return Promise.resolve();
    this.#probing ??= this.#probe().then(
      () => {
        this.#marked = false;
        this.#probing = undefined;
      },
      (err: unknown) => {
        this.#probing = undefined;
        if (!isDiskFull(err)) throw err;
        throw new StoreUnavailableError('the store cannot write: its disk is full', { cause: err });
      },
    );
    return this.#probing;
  }
}
