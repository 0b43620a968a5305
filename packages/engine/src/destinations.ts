/**
 * The live destination cache. A tick must read the live limit (DESIGN flow 2.1): the cache
 * is refreshed from the store whenever a destination changes (in-process in the single box,
 * by Redis pub/sub in the distributed shape), never trusted past a change.
 */

import type { Destination, Store } from './store.ts';

export class DestinationCache {
  private readonly map = new Map<string, Destination>();
  private readonly store: Store;

  constructor(store: Store) {
    this.store = store;
  }

  async get(id: string): Promise<Destination | undefined> {
    const hit = this.map.get(id);
    if (hit) return hit;
    return this.refresh(id);
  }

  peek(id: string): Destination | undefined {
    return this.map.get(id);
  }

  /** Reads the destination again; forgets it when it is gone. */
  async refresh(id: string): Promise<Destination | undefined> {
    const fresh = await this.store.getDestination(id);
    if (fresh) this.map.set(id, fresh);
    else this.map.delete(id);
    return fresh;
  }

  /** Forgets everything (after a missed change: a change-feed reconnect). */
  clear(): void {
    this.map.clear();
  }

  set(destination: Destination): void {
    this.map.set(destination.id, destination);
  }
}

/** The secrets that sign now: the current one and any rotated out less than 24 h ago. */
export function signingSecrets(destination: Destination, now: number): string[] {
  return destination.secrets.filter((s) => s.expiresAt === null || s.expiresAt > now).map((s) => s.secret);
}
