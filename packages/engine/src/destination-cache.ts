/**
 * The live destination cache. A tick must read the live limit (docs/design.md, flow 2.1): the cache
 * is refreshed from the store whenever a destination changes (in-process in the single box,
 * by Redis pub/sub in the distributed shape), never trusted past a change.
 */

import type { Destination, Store } from '@sluice/store';
import { LRUCache } from 'lru-cache';

export class DestinationCache {
  private readonly map: LRUCache<string, Destination>;
  /** The read in flight per destination: a `get` meanwhile waits for it, never the old copy. */
  private readonly loading = new Map<string, Promise<Destination | undefined>>();
  private readonly store: Store;

  /**
   * `size`: most destinations cached (`SLUICE_DESTINATION_CACHE_SIZE`). Every process learns
   * each destination at its creation (so its first events read nothing), and a platform may
   * have far more destinations than ever send at once: the least recently used leave the
   * cache, and are read again on their next use.
   */
  constructor(store: Store, size: number) {
    this.store = store;
    // lru-cache (isaacs): a Map with a bound and recency order, no timers.
    this.map = new LRUCache({ max: size });
  }

  async get(id: string): Promise<Destination | undefined> {
    const hit = this.map.get(id);
    if (hit) return hit;
    return this.loading.get(id) ?? this.refresh(id);
  }

  peek(id: string): Destination | undefined {
    return this.map.get(id);
  }

  /**
   * Reads the destination again; forgets it when it is gone. The cached copy is dropped at
   * once, not when the read returns: a change arrives as a message and the tick it wakes may
   * start before the read is back (the kick follows the change on one connection), and that
   * tick must wait for the new copy rather than run on the old one.
   */
  refresh(id: string): Promise<Destination | undefined> {
    this.map.delete(id);
    const read: Promise<Destination | undefined> = this.store.getDestination(id).then(
      (fresh) => {
        // Only the latest read writes: an older one may have begun before the change.
        if (this.loading.get(id) === read) {
          this.loading.delete(id);
          if (fresh) this.map.set(id, fresh);
        }
        return fresh;
      },
      (err: unknown) => {
        if (this.loading.get(id) === read) this.loading.delete(id);
        throw err;
      },
    );
    this.loading.set(id, read);
    return read;
  }

  /** Forgets everything (after a missed change: a change-feed reconnect). */
  clear(): void {
    this.map.clear();
    this.loading.clear(); // a read begun before the missed change must not write its copy
  }

  set(destination: Destination): void {
    this.loading.delete(destination.id);
    this.map.set(destination.id, destination);
  }
}
