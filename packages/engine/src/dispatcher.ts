/**
 * What the API needs from the delivery side, told after each commit: the single box's
 * `Engine` and the distributed shape's `RedisDispatcher` (packages/distributed) implement it.
 */

import type { Destination } from '@sluice/store';
import type { RuntimeStats } from './pace/runtime-stats.ts';

export interface Dispatcher {
  /** New work was committed for this destination. */
  wake(destinationId: string): void;
  /**
   * Begins waking these destinations while the work for them commits, where a wake costs a
   * round trip (the distributed shape: `RedisDispatcher.wakeAhead`); the answer is told which
   * of them the commit gave work (null: it failed) and wakes those. Absent: `wake` each after
   * the commit.
   */
  wakeAhead?(destinationIds: Iterable<string>): (woken: ReadonlySet<string> | null) => void;
  /**
   * A destination was created: every process caches it now, so its first events read
   * nothing (a first event whose tick, request and ingest each read the destination paid
   * those reads when every destination of a platform starts at once). Never fails: a
   * process that missed it reads the destination on first use.
   */
  destinationCreated(destinationId: string): Promise<void>;
  /**
   * Throws (`StoreUnavailableError`, answered 503) when a change could not be announced to
   * the other processes now — the distributed shape's Redis is not connected — so a route
   * refuses before it commits rather than commit and answer 503 after. Redis lost between
   * this and the announcement still leaves the change committed and the answer 503 (sending
   * it again is safe).
   */
  checkAnnounce(): void;
  /** The destination changed (limit, state, …) or was deleted. */
  destinationChanged(destinationId: string): Promise<void>;
  /** Its live pace, as the delivery side sees it. */
  runtimeStats(destinationId: string): Promise<RuntimeStats>;
  /**
   * The live destination as the delivery side sees it (its cache, refreshed on every change):
   * ingest checks the destinations an event names without a read of the store each time.
   */
  destination(destinationId: string): Promise<Destination | undefined>;
}
