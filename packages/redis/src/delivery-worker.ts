/**
 * The delivery workers' side of the queue (delivery-queue.ts): one BullMQ `Worker` per
 * shard's queue, all drawing on one pool of `concurrency` request slots, so a worker process
 * serves every shard and its concurrency is the same whatever the shard count. Each shard's
 * worker holds at most ⌈concurrency ÷ shards⌉ jobs at once (a job carries up to ten
 * deliveries, so that still fills the slots from one busy shard). With `concurrency` jobs
 * each, a process would hold shards × concurrency locked jobs for `concurrency` slots, and on
 * a saturated machine their lock renewals lapse: stalled jobs run again and their deliveries
 * repeat (docs/performance.md, "On a Redis Cluster").
 *
 * The slots are shared fairly by tenants (`FairSlots`, @sluice/engine: the single box's policy): a
 * delivery waits for its tenant's turn and share, and a job whose tenant holds its share with
 * requests that are not quick (its receivers hang) goes back to the queue, delayed, instead of
 * holding one of the worker's jobs while it waits — when it arrives, or later while none of
 * its deliveries has a slot yet: held here it would keep the worker from taking the other
 * tenants' jobs (a tenant's jobs waiting for its share could hold every one). Its deliveries
 * stay counted as queued meanwhile, so their destinations' ticks publish no more of them.
 *
 * A worker whose connection survived a failover but stopped taking jobs (reported of BullMQ
 * after Sentinel and Cluster failovers: taskforcesh/bullmq#3088, #4378) is watched for: a
 * shard whose queue has jobs waiting, while this process has free slots and its worker took
 * none since the last look, is stuck; its worker is closed and started again.
 */

import { setMaxListeners } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';
import { FairSlots, TENANT_QUICK_MS } from '@sluice/engine';
import type { ClaimedDelivery } from '@sluice/store';
import { DelayedError, type Job, Worker } from 'bullmq';
import type { RedisClient } from './client.ts';
import {
  DELIVERY_QUEUE,
  type DeliveryQueueOptions,
  deliveriesOf,
  type JobData,
  tenantOfJob,
} from './delivery-queue.ts';
import { type TenantHoldsWriter, writeTenantHolds } from './tenant-holds.ts';

/** How many times a job may stall (its worker died, or froze past its lock) and still run again. */
const MAX_STALLS = 5;

/** How often the watch looks for a stuck worker. */
const WATCH_MS = 5_000;

/** A job handed back while its tenant's slots hang comes back after this, doubling to the most. */
const HANDED_BACK_MS = 250;
const HANDED_BACK_MAX_MS = 4_000;
/** How often a job whose deliveries all wait for a slot looks whether to go back. */
const HANDED_BACK_WATCH_MS = 100;
/** The reason a job's waits for slots are stopped: it goes back to the queue. */
const HANDED_BACK = new Error('handed back: its tenant holds its share with slow requests');

export interface DeliveryWorkerOptions extends DeliveryQueueOptions {
  /** Shard n's jobs waiting for a worker (the publisher's view of the queue), for the watch. */
  waiting(shard: number): Promise<number>;
  /** A shard's worker was found stuck and replaced (a log line, a metric). */
  onStuck?(shard: number): void;
  /** How often the watch looks (default WATCH_MS). */
  watchMs?: number | undefined;
  /**
   * A command connection: the worker writes its tenants held by slow requests there every
   * half second (tenant-holds.ts), so that ticks stop publishing to a tenant held everywhere;
   * absent: not written.
   */
  redis?: RedisClient | undefined;
  /** Most requests in flight at once (and jobs active at once). */
  concurrency: number;
  /** A request in flight this long is not quick: its tenant keeps to its share (`SLUICE_TENANT_QUICK_MS`). */
  tenantQuickMs?: number | undefined;
  /**
   * A destination's tenant, for a job that does not say (published before jobs were kept to
   * one tenant); undefined: not known (such jobs share one tenant's turn).
   */
  tenantOf?(destinationId: string): Promise<string | undefined>;
  /** A job whose worker has not renewed its lock for this long may go to another worker. */
  lockMs: number;
  /** How often a worker looks for jobs whose lock expired (stalled) and puts them back. */
  stalledIntervalMs: number;
  /**
   * Runs one delivery's request; `written`, when given, resolves once its outcome is in the
   * store. The request's slot is free before that; the job completes only after it.
   * `rerun`: the job ran before on a worker that died (its request may have started).
   */
  run(delivery: ClaimedDelivery, rerun: boolean): Promise<{ written?: Promise<void> } | undefined>;
  /**
   * A job runs again after its worker died: which of its deliveries are still claimed as it
   * carried them (the others' outcomes were written before the death: not sent again).
   */
  stillClaimed(deliveries: readonly ClaimedDelivery[]): Promise<ReadonlySet<string>>;
  /** Some deliveries of a job could not start (the others did): the sweeper returns them. */
  onPartialFailure(job: Job<JobData>, failed: { delivery: ClaimedDelivery; err: unknown }[]): void;
}

export function startDeliveryWorker(options: DeliveryWorkerOptions): DeliveryWorkers {
  const slots = new FairSlots({
    size: options.concurrency,
    quickMs: options.tenantQuickMs ?? TENANT_QUICK_MS,
  });
  /** Per tenant: jobs handed back in a row while its slots hang (the delay doubles). */
  const handedBack = new Map<string, number>();
  /**
   * Jobs none of whose deliveries has a slot yet, by their tenant: one watch for all of them
   * (running only while there are some) stops the waits of those whose tenant's slots hang.
   */
  const unstarted = new Map<AbortController, string>();
  let watch: ReturnType<typeof setInterval> | undefined;
  const watchUnstarted = (stop: AbortController, tenant: string): void => {
    unstarted.set(stop, tenant);
    if (watch !== undefined) return;
    watch = setInterval(() => {
      for (const [job, of] of unstarted) if (slots.heldBySlow(of)) job.abort(HANDED_BACK);
    }, HANDED_BACK_WATCH_MS);
    watch.unref();
  };
  const unwatch = (stop: AbortController): void => {
    unstarted.delete(stop);
    if (unstarted.size === 0 && watch !== undefined) {
      clearInterval(watch);
      watch = undefined;
    }
  };
  const processor = async (job: Job<JobData>, token?: string): Promise<void> => {
    // Run again after a stall (its worker died, or stalled past its lock): what it sent and
    // recorded is not sent again; what it may have sent is, numbered one higher (the runner).
    const rerun = job.stalledCounter > 0;
    let deliveries = deliveriesOf(job.data);
    const tenant =
      tenantOfJob(job.data) ?? (await options.tenantOf?.(deliveries[0]?.destinationId ?? '')) ?? '';
    const handBack = async (): Promise<never> => {
      const n = handedBack.get(tenant) ?? 0;
      handedBack.set(tenant, n + 1);
      await job.moveToDelayed(Date.now() + Math.min(HANDED_BACK_MAX_MS, HANDED_BACK_MS * 2 ** n), token);
      throw new DelayedError();
    };
    if (slots.heldBySlow(tenant)) return handBack();
    if (rerun) {
      const claimed = await options.stillClaimed(deliveries);
      deliveries = deliveries.filter((d) => claimed.has(d.id));
    }
    // While none of its deliveries has a slot, the job goes back too once its tenant's slots
    // hang: waiting here it would hold one of the worker's jobs, and a tenant whose jobs all
    // wait for its share would hold every one of them (the other tenants' jobs not taken).
    const waiting = new AbortController();
    // One listener a delivery waiting (a job may carry up to SLUICE_JOB_DELIVERIES).
    setMaxListeners(0, waiting.signal);
    let granted = 0;
    const runs = deliveries.map(async (delivery) => {
      // Published ahead of its window's room (docs/adr/0012): it waits for its slot to
      // free holding none of the worker's requests, then takes the first one free, before
      // those waiting in order (the runner checks notBefore again).
      await untilNotBefore(delivery);
      const release = await slots.take(tenant, delivery.destinationId, {
        first: delivery.notBefore !== undefined,
        signal: waiting.signal,
        onGrant: () => {
          granted++;
          unwatch(waiting);
        },
      });
      let ran: { written?: Promise<void> } | undefined;
      try {
        ran = await options.run(delivery, rerun);
      } finally {
        release();
      }
      // Done only once its outcome is written: a worker that dies before that leaves the
      // job stalled, and BullMQ hands it to another worker (a repeat with the same
      // webhook-id, docs/design.md I6) instead of the claim waiting for the sweeper's lease.
      await ran?.written;
    });
    // Once each delivery has asked for its slot (a free one is granted at once): only a job
    // still without one is watched.
    queueMicrotask(() => {
      if (granted === 0) watchUnstarted(waiting, tenant);
    });
    const results = await Promise.allSettled(runs);
    unwatch(waiting);
    if (granted === 0 && waiting.signal.aborted) return handBack();
    handedBack.delete(tenant);
    const failed = deliveries.flatMap((delivery, i) => {
      const r = results[i];
      return r?.status === 'rejected' ? [{ delivery, err: r.reason as unknown }] : [];
    });
    // `run` throws only before its request starts. When none started, BullMQ tries the
    // whole job again; when some did, retrying it would send those twice without a crash
    // (docs/design.md I6), so the job completes and the sweeper returns the others after the lease.
    if (failed.length === deliveries.length && failed[0]) throw failed[0].err;
    if (failed.length > 0) options.onPartialFailure(job, failed);
  };
  const jobsPerShard = Math.ceil(options.concurrency / options.keys.shards);
  const start = (shard: number): Worker<JobData> =>
    new Worker<JobData>(DELIVERY_QUEUE, processor, {
      connection: options.connection,
      prefix: options.keys.bullPrefix(shard),
      concurrency: jobsPerShard,
      // The jobs of a worker that died come back once their locks expire and a stalled check
      // finds them: within lockMs + stalledIntervalMs (BullMQ's defaults, 30 s + 30 s, are
      // too slow: meanwhile their deliveries count as queued and hold their destinations
      // back). A live worker renews its locks every lockMs / 2, one call for all its jobs.
      lockDuration: options.lockMs,
      stalledInterval: options.stalledIntervalMs,
      // A job that stalls again (the worker it was handed to died too, or stalled past its
      // lock while starting up) runs again rather than failing: a failed job's deliveries
      // would wait for the sweeper and their repeats would not be numbered as such.
      maxStalledCount: MAX_STALLS,
    });
  // Its tenants held by slow requests, for the ticks of every process (tenant-holds.ts).
  const holds =
    options.redis === undefined
      ? undefined
      : writeTenantHolds({ redis: options.redis, keys: options.keys, held: () => slots.heldTenants() });
  return new DeliveryWorkers(options, start, () => slots.free, holds);
}

type FailedListener = (job: Job<JobData> | undefined, err: Error) => void;
type CompletedListener = (job: Job<JobData>) => void;
type Listener =
  | { event: 'error'; fn: (err: Error) => void }
  | { event: 'stalled'; fn: (jobId: string) => void }
  | { event: 'failed'; fn: FailedListener }
  | { event: 'completed'; fn: CompletedListener };

/** A worker per shard; `on` listens on all of them, now and after a restart. */
export class DeliveryWorkers {
  private readonly options: DeliveryWorkerOptions;
  private readonly start: (shard: number) => Worker<JobData>;
  private readonly freeSlots: () => number;
  private readonly workers: Worker<JobData>[];
  /** Per shard: jobs its worker took since the watch last looked. */
  private readonly taken: number[];
  /** Workers replaced by the watch, still finishing what they hold. */
  private readonly retired = new Set<Promise<void>>();
  private readonly listeners: Listener[] = [];
  private readonly watch: NodeJS.Timeout;
  /** Shards that looked stuck at the last look. */
  private readonly suspects = new Set<number>();
  private looking = false;
  private closed = false;
  /** Writes this worker's tenants held by slow requests (absent: no command connection). */
  private readonly holds: TenantHoldsWriter | undefined;

  constructor(
    options: DeliveryWorkerOptions,
    start: (shard: number) => Worker<JobData>,
    freeSlots: () => number,
    holds?: TenantHoldsWriter,
  ) {
    this.options = options;
    this.holds = holds;
    this.start = start;
    this.freeSlots = freeSlots;
    const shards = options.keys.allShards();
    this.taken = shards.map(() => 0);
    this.workers = shards.map((shard) => this.started(shard));
    this.watch = setInterval(() => {
      if (this.looking || this.closed) return;
      this.looking = true;
      this.look()
        .catch(() => undefined)
        .finally(() => {
          this.looking = false;
        });
    }, options.watchMs ?? WATCH_MS);
    this.watch.unref();
  }

  private started(shard: number): Worker<JobData> {
    const worker = this.start(shard);
    worker.on('active', () => {
      this.taken[shard] = (this.taken[shard] ?? 0) + 1;
    });
    for (const listener of this.listeners) this.listen(worker, listener);
    return worker;
  }

  private listen(worker: Worker<JobData>, listener: Listener): void {
    if (listener.event === 'error') worker.on('error', listener.fn);
    else if (listener.event === 'failed') worker.on('failed', listener.fn);
    else if (listener.event === 'stalled') worker.on('stalled', listener.fn);
    else worker.on('completed', listener.fn);
  }

  on(event: 'error', fn: (err: Error) => void): void;
  on(event: 'failed', fn: FailedListener): void;
  /** A job whose lock was not renewed in time, found by this worker's stalled check: it runs again. */
  on(event: 'stalled', fn: (jobId: string) => void): void;
  on(event: 'completed', fn: CompletedListener): void;
  on(event: Listener['event'], fn: Listener['fn']): void {
    const listener = { event, fn } as Listener;
    this.listeners.push(listener);
    for (const worker of this.workers) this.listen(worker, listener);
  }

  /**
   * Replaces the worker of each shard that had jobs waiting and took none while slots were
   * free, at two looks in a row (a job published just before a look is not a stuck worker's).
   * The new one starts first; the old one finishes what it holds as it closes.
   */
  private async look(): Promise<void> {
    for (const [shard, worker] of this.workers.entries()) {
      const idle = (this.taken[shard] ?? 0) === 0 && this.freeSlots() > 0;
      this.taken[shard] = 0;
      const stuck = idle && !this.closed && (await this.options.waiting(shard)) > 0;
      if (!stuck || !this.suspects.has(shard)) {
        if (stuck) this.suspects.add(shard);
        else this.suspects.delete(shard);
        continue;
      }
      this.suspects.delete(shard);
      this.options.onStuck?.(shard);
      this.workers[shard] = this.started(shard);
      const retiring = worker.close().catch(() => undefined);
      this.retired.add(retiring);
      void retiring.finally(() => this.retired.delete(retiring));
    }
  }

  /** Takes no new job; waits for the requests in flight. */
  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.watch);
    await Promise.all([...this.workers.map((w) => w.close()), ...this.retired, this.holds?.close()]);
  }
}

/** Resolves at the delivery's `notBefore` (at once without one, or once it has passed). */
function untilNotBefore(delivery: ClaimedDelivery): Promise<void> | undefined {
  const wait = (delivery.notBefore ?? 0) - Date.now();
  return wait > 0 ? sleep(Math.ceil(wait)) : undefined;
}
