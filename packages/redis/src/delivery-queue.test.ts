import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { ClaimedDelivery } from '@sluice/store';
import {
  cleanup,
  connect,
  claimedDelivery as delivery,
  REDIS_TARGET,
  requireRedis,
  uniquePrefix,
  until,
} from '@sluice/testing';
import { bullConnection } from './connection.ts';
import { BullPublisher } from './delivery-queue.ts';
import { startDeliveryWorker } from './delivery-worker.ts';
import { Keys } from './keys.ts';

await requireRedis();

/** The worker's recovery settings (their defaults in @sluice/config); every claim is still held. */
const RECOVERY = {
  lockMs: 4_000,
  stalledIntervalMs: 1_000,
  stillClaimed: async (ds: readonly ClaimedDelivery[]) => new Set(ds.map((d) => d.id)),
};

describe('the BullMQ delivery queue', () => {
  const connection = bullConnection(REDIS_TARGET);

  async function withQueue(
    jobDeliveries: number,
    body: (publisher: BullPublisher, keys: Keys) => Promise<void>,
    shards = 1,
  ) {
    const keys = new Keys(uniquePrefix(), shards);
    const publisher = new BullPublisher({ connection, keys, jobDeliveries });
    try {
      await body(publisher, keys);
    } finally {
      await publisher.close();
      const redis = connect();
      await cleanup(redis, keys.prefix);
      redis.disconnect();
    }
  }

  /** A worker's options but `run`: no job waits elsewhere, nothing is expected to fail. */
  const plainWorker = (keys: Keys, concurrency: number) => ({
    ...RECOVERY,
    connection,
    keys,
    waiting: async () => 0,
    concurrency,
    onPartialFailure: () => assert.fail('nothing fails'),
  });

  /** A worker that records the deliveries it runs, in order; `outcome` is what each run answers. */
  function recordingWorker(
    keys: Keys,
    concurrency: number,
    outcome: (deliveryId: string) => { written?: Promise<void> },
  ) {
    const ran: string[] = [];
    const worker = startDeliveryWorker({
      ...plainWorker(keys, concurrency),
      run: async (d) => {
        ran.push(d.id);
        return outcome(d.id);
      },
    });
    return { worker, ran };
  }

  /** Waits (up to 10 s) for a delayed job in the first shard's queue: one handed back. */
  async function untilDelayed(publisher: BullPublisher, what: string): Promise<void> {
    const queue = publisher.queues[0]!;
    let delayed = 0;
    for (const deadline = Date.now() + 10_000; delayed === 0 && Date.now() < deadline; )
      delayed = await queue.getDelayedCount();
    assert.ok(delayed >= 1, what);
  }

  /**
   * A worker whose requests to any destination but `dst_q` hang until `end()` (quick for
   * 200 ms, SLUICE_TENANT_QUICK_MS's part); `ran`: the destinations of the runs, in order.
   */
  function hangingWorker(keys: Keys, concurrency: number) {
    const hangs: (() => void)[] = [];
    let ending = false;
    const ran: string[] = [];
    const worker = startDeliveryWorker({
      ...plainWorker(keys, concurrency),
      tenantQuickMs: 200,
      run: (d) => {
        ran.push(d.destinationId);
        if (ending || d.destinationId === 'dst_q') return Promise.resolve({});
        return new Promise((resolve) => hangs.push(() => resolve({})));
      },
    });
    const end = async () => {
      ending = true;
      for (const release of hangs) release();
      await worker.close();
    };
    return { ran, end };
  }

  it('hands every published delivery to a worker once, in jobs of at most jobDeliveries; depth counts jobs', async () => {
    await withQueue(10, async (publisher, keys) => {
      await publisher.publish(
        'dst_a',
        Array.from({ length: 45 }, (_, n) => delivery(n)),
      );
      assert.equal(await publisher.depth(), 5, '45 deliveries in jobs of 10');
      const seen: string[] = [];
      let inFlight = 0;
      let most = 0;
      const worker = startDeliveryWorker({
        ...RECOVERY,
        connection,
        keys,
        waiting: async () => 0,
        concurrency: 8,
        run: async (d) => {
          inFlight++;
          most = Math.max(most, inFlight);
          seen.push(d.id);
          await new Promise((r) => setTimeout(r, 5));
          inFlight--;
        },
        onPartialFailure: () => assert.fail('nothing fails'),
      });
      await until(() => seen.length >= 45, '45 deliveries');
      await worker.close();
      assert.equal(new Set(seen).size, 45, 'each delivery once');
      assert.ok(most <= 8, `at most 8 requests in flight, saw ${most}`);
      const firstJob = seen.filter((id) => Number(id.slice(4)) < 10);
      assert.deepEqual(
        firstJob,
        Array.from({ length: 10 }, (_, n) => `dlv_${n}`),
        'a job starts its deliveries in claim order',
      );
      assert.equal(await publisher.depth(), 0);
    });
  });

  it('the ticks of one turn publish together: one delivery each from 25 destinations fills 3 jobs', async () => {
    await withQueue(10, async (publisher) => {
      const ticks = Array.from({ length: 25 }, (_, n) => ({ ...delivery(n), destinationId: `dst_${n}` }));
      await Promise.all(ticks.map((d) => publisher.publish(d.destinationId, [d])));
      assert.equal(await publisher.depth(), 3, '25 deliveries in jobs of 10, whatever their destinations');
      const jobs = await publisher.queues[0]!.getJobs(['wait'], 0, -1);
      const published = jobs.flatMap((job) => ('deliveries' in job.data ? job.data.deliveries : []));
      assert.deepEqual(
        published.map((d) => d.destinationId).sort(),
        ticks.map((d) => d.destinationId).sort(),
      );
      // Another turn: its own job.
      await publisher.publish('dst_x', [{ ...delivery(99), destinationId: 'dst_x' }]);
      assert.equal(await publisher.depth(), 4);
    });
  });

  it('a job some of whose deliveries could not start completes (no repeat of the others) and reports them', async () => {
    await withQueue(5, async (publisher, keys) => {
      await publisher.publish(
        'dst_a',
        Array.from({ length: 5 }, (_, n) => delivery(n)),
      );
      const runs: string[] = [];
      const reported: string[] = [];
      const worker = startDeliveryWorker({
        ...RECOVERY,
        connection,
        keys,
        waiting: async () => 0,
        concurrency: 4,
        run: async (d) => {
          runs.push(d.id);
          if (d.id === 'dlv_2') throw new Error('store unreachable');
        },
        onPartialFailure: (_job, failed) => reported.push(...failed.map((f) => f.delivery.id)),
      });
      await until(() => reported.length > 0, 'the report');
      await new Promise((r) => setTimeout(r, 300));
      await worker.close();
      assert.deepEqual(reported, ['dlv_2']);
      assert.equal(runs.length, 5, 'the job ran once: the four that started are not sent again');
      assert.equal(await publisher.depth(), 0);
    });
  });

  it("a job completes once its deliveries' outcomes are written; their request slots are free before", async () => {
    await withQueue(5, async (publisher, keys) => {
      await publisher.publish('dst_a', [delivery(1), delivery(2)]);
      const { promise: written, resolve: write } = Promise.withResolvers<void>();
      const { worker, ran } = recordingWorker(keys, 1, () => ({ written }));
      let completed = 0;
      worker.on('completed', () => completed++);
      // One slot: the second request starts only because the first freed it, unwritten.
      await until(() => ran.length === 2, 'both requests');
      await new Promise((r) => setTimeout(r, 200));
      assert.equal(completed, 0, 'not complete while an outcome is unwritten');
      assert.equal(
        (await publisher.queues[0]!.getJobCounts('active')).active,
        1,
        'a worker that dies now leaves it stalled',
      );
      write();
      await until(() => completed === 1, 'the job to complete');
      await worker.close();
      assert.deepEqual(ran, ['dlv_1', 'dlv_2'], 'each request once');
    });
  });

  it('a delivery published again while the job that first carried it is active gets a job of its own', async () => {
    await withQueue(5, async (publisher, keys) => {
      await publisher.publish('dst_a', [delivery(1), delivery(2)]);
      const { promise: written, resolve: write } = Promise.withResolvers<void>();
      // dlv_1 did not start (released: back to pending, claimed again); dlv_2 did and keeps
      // the first job active until its outcome is written.
      const { worker, ran } = recordingWorker(keys, 4, (id) => (id === 'dlv_2' ? { written } : {}));
      try {
        await until(() => ran.length === 2, 'the first job');
        await new Promise((r) => setTimeout(r, 2)); // a publish in another millisecond
        await publisher.publish('dst_a', [delivery(1)]);
        await until(() => ran.length === 3, 'dlv_1 published again');
      } finally {
        write();
        await worker.close();
      }
      assert.deepEqual(ran, ['dlv_1', 'dlv_2', 'dlv_1']);
    });
  });

  it('a job none of whose deliveries could start is tried again by BullMQ', async () => {
    await withQueue(5, async (publisher, keys) => {
      await publisher.publish('dst_a', [delivery(1)]);
      let tries = 0;
      const worker = startDeliveryWorker({
        ...RECOVERY,
        connection,
        keys,
        waiting: async () => 0,
        concurrency: 1,
        run: async () => {
          tries++;
          if (tries === 1) throw new Error('redis blinked');
        },
        onPartialFailure: () => assert.fail('a one-delivery job fails whole'),
      });
      await until(() => tries >= 2, 'the retry');
      await worker.close();
    });
  });

  it('liveOf: which claims are still in a live job (the sweeper asks only about stale claims)', async () => {
    await withQueue(3, async (publisher) => {
      assert.deepEqual(await publisher.liveOf([]), new Set());
      await publisher.publish(
        'dst_a',
        Array.from({ length: 4 }, (_, n) => delivery(n)),
      );
      const claims = [0, 2, 3, 9].map((n) => ({ id: `dlv_${n}`, attempts: 0 }));
      assert.deepEqual(await publisher.liveOf(claims), new Set(['dlv_0', 'dlv_2', 'dlv_3']));
    });
  });

  it('drains a job published before jobs carried several deliveries (one delivery as its data)', async () => {
    await withQueue(10, async (publisher, keys) => {
      await publisher.queues[0]!.add('deliver', delivery(7), { jobId: 'dlv_7-0' });
      assert.deepEqual(await publisher.liveOf([{ id: 'dlv_7', attempts: 0 }]), new Set(['dlv_7']));
      const seen: string[] = [];
      const worker = startDeliveryWorker({
        ...RECOVERY,
        connection,
        keys,
        waiting: async () => 0,
        concurrency: 2,
        run: async (d) => {
          seen.push(d.id);
        },
        onPartialFailure: () => assert.fail('nothing fails'),
      });
      await until(() => seen.length >= 1, 'the old job');
      await worker.close();
      assert.deepEqual(seen, ['dlv_7']);
    });
  });

  it('a delivery published ahead waits for its notBefore outside the request slots, then goes first', async () => {
    await withQueue(10, async (publisher, keys) => {
      // Far enough ahead that publishing and the worker's start, on a busy machine, come first.
      const notBefore = Date.now() + 2_000;
      // One job: a delivery published ahead, then two that may start now; one request slot.
      await publisher.publish('dst_a', [{ ...delivery(1), notBefore }, delivery(2), delivery(3)]);
      const started: { id: string; at: number }[] = [];
      const worker = startDeliveryWorker({
        ...RECOVERY,
        connection,
        keys,
        waiting: async () => 0,
        concurrency: 1,
        run: async (d) => {
          started.push({ id: d.id, at: Date.now() });
          // dlv_2 holds the only slot past dlv_1's notBefore: dlv_1 must then go before dlv_3.
          if (d.id === 'dlv_2')
            await new Promise((r) => setTimeout(r, Math.max(0, notBefore + 100 - Date.now())));
        },
        onPartialFailure: () => assert.fail('nothing fails'),
      });
      await until(() => started.length === 3, 'the three');
      await worker.close();
      assert.deepEqual(
        started.map((s) => s.id),
        ['dlv_2', 'dlv_1', 'dlv_3'],
        'the one waiting held no slot, and took the first one free once due',
      );
      assert.ok((started[1]?.at ?? 0) >= notBefore);
    });
  });

  it("a tenant's hanging requests hold its share of a worker's slots; another tenant's job runs at once", async () => {
    await withQueue(10, async (publisher, keys) => {
      const { ran, end } = hangingWorker(keys, 10);
      try {
        // The hanging tenant's first job (10 deliveries): alone and quick at first, it takes the
        // pool less the reserve (10 − 1); once they have hung 200 ms, no more.
        const hanging = (from: number, n: number) =>
          Array.from({ length: n }, (_, i) => ({ ...delivery(from + i), destinationId: 'dst_h' }));
        await publisher.publish('dst_h', hanging(0, 10), 'ten_hang');
        await until(() => ran.length >= 9, 'the hanging tenant started');
        await new Promise((r) => setTimeout(r, 400));
        // Its next three jobs go back to the queue, delayed, rather than wait in the worker.
        await publisher.publish('dst_h', hanging(10, 30), 'ten_hang');
        await untilDelayed(publisher, 'a job of the hanging tenant went back to the queue, delayed');
        const quiet = Array.from({ length: 3 }, (_, n) => ({ ...delivery(100 + n), destinationId: 'dst_q' }));
        await publisher.publish('dst_q', quiet, 'ten_quiet');
        await until(() => ran.filter((d) => d === 'dst_q').length === 3, 'the quiet tenant ran');
        assert.equal(ran.filter((d) => d === 'dst_h').length, 9, 'the hanging tenant took no more');
      } finally {
        await end();
      }
    });
  });

  it("a job waiting for its tenant's share goes back once that tenant's requests hang, freeing its job", async () => {
    // One delivery a job, 4 jobs and 4 slots: the hanging tenant's first 4 jobs are all the
    // worker holds — 3 running (the pool less the reserve), 1 waiting for a slot.
    await withQueue(1, async (publisher, keys) => {
      const { ran, end } = hangingWorker(keys, 4);
      try {
        const hanging = Array.from({ length: 8 }, (_, i) => ({ ...delivery(i), destinationId: 'dst_h' }));
        await publisher.publish('dst_h', hanging, 'ten_hang');
        await until(() => ran.length >= 3, 'the hanging tenant started');
        await untilDelayed(publisher, 'the waiting job went back to the queue, delayed');
        await publisher.publish('dst_q', [{ ...delivery(100), destinationId: 'dst_q' }], 'ten_quiet');
        await until(() => ran.includes('dst_q'), "the quiet tenant's job ran");
        assert.equal(ran.filter((d) => d === 'dst_h').length, 3, 'the hanging tenant took no more');
      } finally {
        await end();
      }
    });
  });
});
