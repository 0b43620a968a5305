import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Destination, Store } from '@sluice/store';
import { pino } from 'pino';
import { Registry } from 'prom-client';
import { Engine } from './engine.ts';

/** The one store read the engine makes before it starts: a destination, counted. */
function engine(
  read: (id: string) => Promise<Destination | undefined>,
  destinationCacheSize?: number,
): { engine: Engine; reads: string[] } {
  const reads: string[] = [];
  const store = {
    getDestination(id: string) {
      reads.push(id);
      return read(id);
    },
  } as unknown as Store;
  const e = new Engine({
    store,
    logger: pino({ level: 'silent' }),
    registry: new Registry(),
    allowPrivateNetworks: false,
    deliveryConcurrency: 1,
    windowMarginMs: 5,
    arrivalBoundMs: 250,
    sweepIntervalMs: 60_000,
    leaseMs: 60_000,
    tickLeadMs: 100,
    completionFlushMs: 5,
    retentionMs: 86_400_000,
    destinationCacheSize: destinationCacheSize ?? 100_000,
  });
  return { engine: e, reads };
}

describe('Engine', () => {
  it('caches a created destination before its first event, and schedules nothing', async () => {
    const { engine: e, reads } = engine(async (id) => ({ id, state: 'active' }) as unknown as Destination);
    await e.destinationCreated('dst_new');
    assert.equal(e.destinations.peek('dst_new')?.id, 'dst_new');
    assert.equal(e.isScheduled('dst_new'), false, 'nothing to run');
    await e.destination('dst_new');
    assert.deepEqual(reads, ['dst_new'], 'its first use reads nothing more');
  });

  it('a failed read fails nothing: the destination is read on first use', async () => {
    let fail = true;
    const { engine: e, reads } = engine(async (id) => {
      if (fail) throw new Error('store unavailable');
      return { id, state: 'active' } as unknown as Destination;
    });
    await e.destinationCreated('dst_new');
    assert.equal(e.destinations.peek('dst_new'), undefined);
    fail = false;
    assert.equal((await e.destination('dst_new'))?.id, 'dst_new');
    assert.deepEqual(reads, ['dst_new', 'dst_new']);
  });

  it('caches at most destinationCacheSize destinations', async () => {
    const { engine: e, reads } = engine(async (id) => ({ id, state: 'active' }) as unknown as Destination, 2);
    for (const id of ['a', 'b', 'c']) await e.destinationCreated(id);
    assert.equal(e.destinations.peek('a'), undefined, 'the least recently used left');
    await e.destination('a');
    assert.deepEqual(reads, ['a', 'b', 'c', 'a'], 'and is read again on its next use');
  });
});
