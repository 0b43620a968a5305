/**
 * The distributed delivery queue: one BullMQ queue that the rate limiters publish to
 * (`addBulk`) and the delivery workers drain (`Worker` with concurrency). It holds only
 * what the ticks published — at most the per-run counts of the scheduled destinations
 * (docs/design.md I3) — so a backlog stays in Postgres, not in Redis memory.
 *
 * A job carries up to `jobDeliveries` deliveries published in one turn of the event loop —
 * by one tick, or by the ticks of several destinations that ran together
 * (docs/adr/0010-delivery-jobs.md): BullMQ's own work per job (add, move to active, move to
 * finished, its events stream) is most of Redis' work per delivery, paid once for up to ten.
 * A worker starts a job's requests in order, each paced on its own exactly as before, with at
 * most `concurrency` requests in flight.
 *
 * Retries are ours, not BullMQ's: a failed attempt goes back to `pending` in the store and
 * through the rate limiter again. BullMQ retries a job only when the worker failed before
 * its request started (an unreachable store or Redis), a few times with backoff; a job it
 * gives up on returns to pending through the sweeper's lease. A worker that
 * dies mid-job — until the job's outcomes are written — leaves a stalled job that BullMQ
 * hands to another worker: a repeat after a crash, with the same `webhook-id` (docs/design.md I6).
 */

import { setTimeout as sleep } from 'node:timers/promises';
import type { Publisher } from '@sluice/engine';
import { type ClaimedDelivery, perTurn } from '@sluice/store';
import { type ConnectionOptions, type Job, Queue, Worker } from 'bullmq';

export const DELIVERY_QUEUE = 'deliveries';

/** How many times a job may stall (its worker died, or froze past its lock) and still run again. */
const MAX_STALLS = 5;

/** Deliveries per job unless configured (`SLUICE_JOB_DELIVERIES`). */
const JOB_DELIVERIES = 10;

/** A job's data: deliveries, each destination's in claim order. */
interface DeliveryJob {
  deliveries: ClaimedDelivery[];
}

/** A job published before jobs carried several deliveries held one delivery as its data. */
type JobData = DeliveryJob | ClaimedDelivery;

function deliveriesOf(data: JobData): ClaimedDelivery[] {
  return 'deliveries' in data ? data.deliveries : [data];
}

export interface DeliveryQueueOptions {
  connection: ConnectionOptions;
  /** BullMQ's own key prefix (its keys never mix with ours). */
  prefix: string;
}

export interface PublisherOptions extends DeliveryQueueOptions {
  /** Most deliveries in one job (default JOB_DELIVERIES). */
  jobDeliveries?: number | undefined;
}

/**
 * A job's id: its first delivery's attempt and the moment of the publish. BullMQ adds nothing
 * for an id it holds, so a MULTI sent again (a reconnect) adds no second job; but a delivery
 * published again — a retry, a delivery released because the window had no room under a
 * lowered limit, a claim the sweeper returned — must get a new job even while the job that
 * first carried it is still active (its other deliveries running) or kept as failed: with
 * the attempt alone as its id, such a job was dropped and its deliveries stayed claimed.
 */
function jobIdOf(delivery: { id: string; attempts: number }, publishedAt: number): string {
  return `${delivery.id}-${delivery.attempts}-${publishedAt.toString(36)}`;
}

export class BullPublisher implements Publisher {
  readonly queue: Queue<JobData>;
  private readonly jobDeliveries: number;
  private readonly batches = perTurn<ClaimedDelivery[], undefined>((batches) => this.addBulk(batches), 200);

  constructor(options: PublisherOptions) {
    this.jobDeliveries = options.jobDeliveries ?? JOB_DELIVERIES;
    this.queue = new Queue<JobData>(DELIVERY_QUEUE, {
      connection: options.connection,
      prefix: options.prefix,
      // A job fails only when the worker could not start its request (the store or Redis
      // did not answer): BullMQ tries it again shortly. A failed request is not a failed
      // job; its retry is ours, through the rate limiter.
      defaultJobOptions: {
        attempts: 5,
        backoff: { type: 'exponential', delay: 500 },
        removeOnComplete: true,
        removeOnFail: 1_000,
      },
    });
  }

  /**
   * The ticks of one turn publish in one `addBulk` (one MULTI, one round trip). `perTurn`
   * gathers them, as the store's claims (store-postgres claim.ts); a failed `addBulk` fails
   * every tick in it, and each tick's deliveries return to pending after the lease.
   */
  async publish(_destinationId: string, deliveries: ClaimedDelivery[]): Promise<void> {
    await this.batches.load(deliveries);
  }

  private async addBulk(batches: readonly ClaimedDelivery[][]): Promise<undefined[]> {
    // The ticks' deliveries one after the other (each tick's in claim order), cut into jobs:
    // a steady trickle over many destinations — one delivery per tick — fills jobs too.
    const deliveries = batches.flat();
    const jobs: { name: string; data: DeliveryJob; opts: { jobId: string } }[] = [];
    const publishedAt = Date.now();
    for (let i = 0; i < deliveries.length; i += this.jobDeliveries) {
      const chunk = deliveries.slice(i, i + this.jobDeliveries);
      // A delivery is claimed into one job per publish.
      jobs.push({
        name: 'deliver',
        data: { deliveries: chunk },
        opts: { jobId: jobIdOf(chunk[0]!, publishedAt) },
      });
    }
    await this.queue.addBulk(jobs);
    return batches.map(() => undefined);
  }

  /**
   * Which of these claimed deliveries are still in a job waiting, active or delayed in the
   * queue (a completed job is removed, a failed one is not live). The sweeper asks only when
   * claims are past their lease (a crash, rare), so the queue is listed only then — never at
   * every sweep, which would read every job's payload each time.
   */
  async liveOf(claims: readonly { id: string; attempts: number }[]): Promise<Set<string>> {
    if (claims.length === 0) return new Set();
    const jobs = await this.queue.getJobs(['wait', 'active', 'delayed', 'prioritized'], 0, -1);
    const live = new Set(jobs.flatMap((job) => (job?.data ? deliveriesOf(job.data).map((d) => d.id) : [])));
    return new Set(claims.flatMap((c) => (live.has(c.id) ? [c.id] : [])));
  }

  /** Jobs waiting for a worker: the autoscaling signal. */
  async depth(): Promise<number> {
    const counts = await this.queue.getJobCounts('wait', 'prioritized', 'delayed');
    return (counts.wait ?? 0) + (counts.prioritized ?? 0) + (counts.delayed ?? 0);
  }

  async close(): Promise<void> {
    await this.queue.close();
  }
}

export interface DeliveryWorkerOptions extends DeliveryQueueOptions {
  /** Most requests in flight at once (and jobs active at once). */
  concurrency: number;
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

export function startDeliveryWorker(options: DeliveryWorkerOptions): Worker<JobData> {
  const slots = new Slots(options.concurrency);
  return new Worker<JobData>(
    DELIVERY_QUEUE,
    async (job: Job<JobData>) => {
      // Run again after a stall (its worker died, or stalled past its lock): what it sent and
      // recorded is not sent again; what it may have sent is, numbered one higher (the runner).
      const rerun = job.stalledCounter > 0;
      let deliveries = deliveriesOf(job.data);
      if (rerun) {
        const claimed = await options.stillClaimed(deliveries);
        deliveries = deliveries.filter((d) => claimed.has(d.id));
      }
      const results = await Promise.allSettled(
        deliveries.map(async (delivery) => {
          // Published ahead of its window's room (docs/adr/0012): it waits for its slot to
          // free holding none of the worker's requests, then takes the first one free, before
          // those waiting in order (the runner checks notBefore again).
          await untilNotBefore(delivery);
          await slots.take(delivery.notBefore !== undefined);
          let ran: { written?: Promise<void> } | undefined;
          try {
            ran = await options.run(delivery, rerun);
          } finally {
            slots.give();
          }
          // Done only once its outcome is written: a worker that dies before that leaves the
          // job stalled, and BullMQ hands it to another worker (a repeat with the same
          // webhook-id, docs/design.md I6) instead of the claim waiting for the sweeper's lease.
          await ran?.written;
        }),
      );
      const failed = deliveries.flatMap((delivery, i) => {
        const r = results[i];
        return r?.status === 'rejected' ? [{ delivery, err: r.reason as unknown }] : [];
      });
      // `run` throws only before its request starts. When none started, BullMQ tries the
      // whole job again; when some did, retrying it would send those twice without a crash
      // (docs/design.md I6), so the job completes and the sweeper returns the others after the lease.
      if (failed.length === deliveries.length && failed[0]) throw failed[0].err;
      if (failed.length > 0) options.onPartialFailure(job, failed);
    },
    {
      connection: options.connection,
      prefix: options.prefix,
      concurrency: options.concurrency,
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
    },
  );
}

/** Resolves at the delivery's `notBefore` (at once without one, or once it has passed). */
function untilNotBefore(delivery: ClaimedDelivery): Promise<void> | undefined {
  const wait = (delivery.notBefore ?? 0) - Date.now();
  return wait > 0 ? sleep(Math.ceil(wait)) : undefined;
}

/** A counting semaphore: requests in flight across the jobs a worker holds, started in order. */
class Slots {
  private free: number;
  private readonly waiting: (() => void)[] = [];

  constructor(size: number) {
    this.free = size;
  }

  /** `first`: ahead of those already waiting (a delivery whose window slot just freed). */
  take(first = false): Promise<void> | undefined {
    if (this.free > 0) {
      this.free--;
      return undefined;
    }
    return new Promise((resolve) => (first ? this.waiting.unshift(resolve) : this.waiting.push(resolve)));
  }

  give(): void {
    const next = this.waiting.shift();
    if (next) next();
    else this.free++;
  }
}

/**
 * BullMQ's connection options for a redis:// or rediss:// URL. A `rediss://` URL means TLS,
 * as ioredis reads it (`tls` set); BullMQ takes options, not the URL, so it is carried here.
 */
export function bullConnection(redisUrl: string) {
  const url = new URL(redisUrl);
  return {
    host: url.hostname,
    port: Number(url.port || 6379),
    db: Number(url.pathname.slice(1) || 0),
    ...(url.password ? { password: decodeURIComponent(url.password) } : {}),
    ...(url.username ? { username: decodeURIComponent(url.username) } : {}),
    ...(url.protocol === 'rediss:' ? { tls: {} } : {}),
  };
}
