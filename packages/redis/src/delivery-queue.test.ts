import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { ClaimedDelivery } from '@sluice/engine';
import { BullPublisher, startDeliveryWorker } from './delivery-queue.ts';
import { cleanup, connect, REDIS_URL, redisAvailable, uniquePrefix } from './test-redis.ts';

const skip = !(await redisAvailable());

const delivery = (n: number): ClaimedDelivery => ({
  id: `dlv_${n}`,
  eventId: `evt_${n}`,
  destinationId: 'dst_a',
  sequence: n,
  eventType: 'test',
  payload: JSON.stringify({ n }),
  attempts: 0,
  attemptBase: 0,
  eventCreatedAt: 0,
});

describe('the BullMQ delivery queue', { skip }, () => {
  it('hands every published delivery to a worker once; depth rises and falls', async () => {
    const prefix = uniquePrefix();
    const url = new URL(REDIS_URL);
    const connection = { host: url.hostname, port: Number(url.port || 6379) };
    const publisher = new BullPublisher({ connection, prefix });
    const seen: string[] = [];
    try {
      await publisher.publish(
        'dst_a',
        Array.from({ length: 50 }, (_, n) => delivery(n)),
      );
      assert.equal(await publisher.depth(), 50);
      const worker = startDeliveryWorker({
        connection,
        prefix,
        concurrency: 8,
        run: async (d) => {
          seen.push(d.id);
        },
      });
      const deadline = Date.now() + 10_000;
      while (seen.length < 50 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      await worker.close();
      assert.equal(seen.length, 50);
      assert.equal(new Set(seen).size, 50, 'each delivery once');
      assert.equal(await publisher.depth(), 0);
    } finally {
      await publisher.close();
      const redis = connect();
      await cleanup(redis, prefix);
      redis.disconnect();
    }
  });
});
