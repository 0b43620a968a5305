/**
 * The calls of one turn of the event loop, run as one batch: what the distributed shape's
 * hot paths share (the rate limiter's claims and publishes, the API's accepts). The ticks a
 * rate limiter runs side by side, or the requests an API process reads together, ask in the
 * same turn; one statement or one round trip then serves them all, so the cost per call
 * falls as the load rises.
 *
 * DataLoader (graphql/dataloader) does the gathering: it is the well-kept library for exactly
 * this — queue the calls, run one batch function, hand each caller its own result or error.
 * Its cache is off: these calls are writes, never reads to reuse.
 */

import DataLoader from 'dataloader';

/** Its `load(request)` answers one caller. */
export type PerTurn<K, V> = DataLoader<K, V>;

/** `batch` gets the requests of one turn (at most `max`) and answers each, in order. */
export function perTurn<K, V>(
  batch: (requests: readonly K[]) => Promise<readonly (V | Error)[]>,
  max: number,
): PerTurn<K, V> {
  return new DataLoader<K, V>(batch, {
    cache: false,
    maxBatchSize: max,
    // A turn is an I/O phase: the callers whose replies came in one read all ask.
    batchScheduleFn: (run) => setImmediate(run),
  });
}
