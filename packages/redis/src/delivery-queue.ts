/**
 * The distributed delivery queue: one BullMQ queue that the rate limiters publish to
 * (`addBulk`) and the delivery workers drain (`Worker` with concurrency). It holds only
 * what the ticks published — at most the per-run counts of the scheduled destinations
 * (DESIGN I3) — so a backlog stays in Postgres, not in Redis memory.
 *
 * Retries are ours, not BullMQ's: a failed attempt goes back to `pending` in the store and
 * through the rate limiter again. BullMQ retries a job only when the worker failed before
 * its request started (an unreachable store or Redis), a few times with backoff; a job it
 * gives up on returns to pending through the sweeper's lease. A worker that
 * dies mid-job leaves a stalled job that BullMQ hands to another worker: a repeat after a
 * crash, with the same `webhook-id` (DESIGN I6).
 */

import type { ClaimedDelivery, Publisher } from '@sluice/engine';
import { type ConnectionOptions, type Job, Queue, Worker } from 'bullmq';

export const DELIVERY_QUEUE = 'deliveries';

export interface DeliveryQueueOptions {
  connection: ConnectionOptions;
  /** BullMQ's own key prefix (its keys never mix with ours). */
  prefix: string;
}

const LIVE_STATES = new Set(['waiting', 'active', 'delayed', 'prioritized', 'waiting-children']);

/** One job per attempt: a retry of the same delivery is a new job. */
function jobIdOf(delivery: { id: string; attempts: number }): string {
  return `${delivery.id}-${delivery.attempts}`;
}

export class BullPublisher implements Publisher {
  readonly queue: Queue<ClaimedDelivery>;

  constructor(options: DeliveryQueueOptions) {
    this.queue = new Queue<ClaimedDelivery>(DELIVERY_QUEUE, {
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

  async publish(_destinationId: string, deliveries: ClaimedDelivery[]): Promise<void> {
    await this.queue.addBulk(
      deliveries.map((delivery) => ({
        name: 'deliver',
        data: delivery,
        opts: { jobId: jobIdOf(delivery) },
      })),
    );
  }

  /**
   * Which of these claimed deliveries still have their job waiting, active or delayed in the
   * queue (a completed job is removed, a failed one is not live). One `getJobState` per
   * delivery, sent together: the sweeper asks only about claims past their lease, never
   * lists the queue (that would read every job's payload at every sweep).
   */
  async liveOf(claims: readonly { id: string; attempts: number }[]): Promise<Set<string>> {
    const states = await Promise.all(claims.map((c) => this.queue.getJobState(jobIdOf(c))));
    return new Set(claims.flatMap((c, i) => (LIVE_STATES.has(states[i] as string) ? [c.id] : [])));
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
  concurrency: number;
  run(delivery: ClaimedDelivery): Promise<void>;
}

export function startDeliveryWorker(options: DeliveryWorkerOptions): Worker<ClaimedDelivery> {
  return new Worker<ClaimedDelivery>(
    DELIVERY_QUEUE,
    async (job: Job<ClaimedDelivery>) => {
      await options.run(job.data);
    },
    { connection: options.connection, prefix: options.prefix, concurrency: options.concurrency },
  );
}
