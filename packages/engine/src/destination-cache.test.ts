import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Destination, Store } from '@sluice/store';
import { DestinationCache } from './destination-cache.ts';

/** A store whose destinations are `{ id, version }`, counting its reads. */
function store(): { store: Store; reads: string[]; version: Map<string, number> } {
  const reads: string[] = [];
  const version = new Map<string, number>();
  return {
    reads,
    version,
    store: {
      async getDestination(id: string) {
        reads.push(id);
        return { id, version: version.get(id) ?? 0 } as unknown as Destination;
      },
    } as unknown as Store,
  };
}

describe('DestinationCache', () => {
  it('keeps the most recently used destinations up to its size, and reads the others again', async () => {
    const s = store();
    const cache = new DestinationCache(s.store, 2);
    await cache.get('a');
    await cache.get('b');
    await cache.get('a'); // a is now the most recently used
    await cache.get('c'); // b leaves
    assert.deepEqual(s.reads, ['a', 'b', 'c']);
    assert.ok(cache.peek('a') && cache.peek('c'));
    assert.equal(cache.peek('b'), undefined);
    await cache.get('b');
    assert.deepEqual(s.reads, ['a', 'b', 'c', 'b'], 'read again on its next use');
  });

  it('never answers a copy older than the last refresh', async () => {
    const s = store();
    const cache = new DestinationCache(s.store, 100);
    await cache.get('a');
    s.version.set('a', 1);
    const refreshed = cache.refresh('a');
    const meanwhile = cache.get('a'); // waits for the read, not the old copy
    assert.equal(((await meanwhile) as unknown as { version: number }).version, 1);
    await refreshed;
    assert.equal((cache.peek('a') as unknown as { version: number }).version, 1);
  });
});
