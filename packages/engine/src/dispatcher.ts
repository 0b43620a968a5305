/**
 * What the API needs from the delivery side, told after each commit: the single box's
 * `Engine` and the distributed shape's `RedisDispatcher` (packages/distributed) implement it.
 */

import type { AcceptResult, Destination } from '@sluice/store';
import type { RuntimeStats } from './pace/runtime-stats.ts';

/** The ticks a process holds around an accept (`Dispatcher.hold`). */
export interface AcceptHold {
  /** Per held destination, how many of the accept's deliveries may go out at once. */
  room: ReadonlyMap<string, number>;
  /** After the commit: the held ticks publish what the store inserted claimed; the rest wake. */
  accepted(results: readonly AcceptResult[]): void;
  /** The accept failed: the held ticks run as ticks do (nothing of theirs was written). */
  failed(): void;
}

export interface Dispatcher {
  /** New work was committed for this destination. */
  wake(destinationId: string): void;
  /**
   * Before an accept for these destinations (docs/adr/0016): takes the ticks of those that
   * have room now and no tick running, so that the accept inserts their deliveries claimed
   * and this process publishes them. Never fails (a destination it could not take is woken
   * after the commit, as without it). Absent: an accept only wakes.
   */
  hold?(destinationIds: readonly string[]): Promise<AcceptHold>;
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
