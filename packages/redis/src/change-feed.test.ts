import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import { it } from 'node:test';
import type { DestinationCache } from '@sluice/engine';
import { followChanges } from './change-feed.ts';
import type { RedisClient } from './connection.ts';
import { Keys } from './keys.ts';

it('a cluster node joining or leaving the map forgets every cached destination, now and after the subscription moved', async (t) => {
  t.mock.timers.enable({ apis: ['setTimeout'] });
  let cleared = 0;
  const cache = { clear: () => cleared++, refresh: async () => undefined } as unknown as DestinationCache;
  const subscriber = Object.assign(new EventEmitter(), {
    subscribe: async () => 1,
    unsubscribe: async () => 1,
  }) as unknown as RedisClient;
  const feed = await followChanges(subscriber, new Keys('p'), cache);
  subscriber.emit('-node', {}, '127.0.0.1:7000');
  assert.equal(cleared, 1, 'at once');
  t.mock.timers.tick(2_000);
  assert.equal(cleared, 2, 'and again once the subscription has moved');
  subscriber.emit('+node', {});
  t.mock.timers.tick(2_000);
  assert.equal(cleared, 4);
  await feed.stop();
  subscriber.emit('-node', {}, '127.0.0.1:7001');
  assert.equal(cleared, 4, 'stopped: no longer listening');
});
