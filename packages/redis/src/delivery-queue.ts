/**
 * The distributed delivery queue: a BullMQ queue per schedule shard (keys.ts `bullPrefix`:
 * on a cluster, each on its shard's node) that the rate limiters publish to (`addBulk`) and
 * the delivery workers drain (delivery-worker.ts: a `Worker` per shard, one pool of slots). It holds only
 * what the ticks published — at most the per-run counts of the scheduled destinations
 * (docs/design.md I3) — so a backlog stays in Postgres, not in Redis memory.
 *
 * A job carries up to `jobDeliveries` deliveries published in one turn of the event loop —
 * by one tick, or by the ticks of several destinations that ran together
 * (docs/adr/0010-delivery-jobs.md): BullMQ's own work per job (add, move to active, move to
 * finished, its events stream) is most of Redis' work per delivery, paid once for up to ten.
 * A worker starts a job's requests in order, each paced on its own exactly as a job of one
 * delivery would be, with at most `concurrency` requests in flight.
 *
 * Retries are ours, not BullMQ's: a failed attempt goes back to `pending` in the store and
 * through the rate limiter again. BullMQ retries a job only when the worker failed before
 * its request started (an unreachable store or Redis), a few times with backoff; a job it
 * gives up on returns to pending through the sweeper's lease. A worker that
 * dies mid-job — until the job's outcomes are written — leaves a stalled job that BullMQ
 * hands to another worker: a repeat after a crash, with the same `webhook-id` (docs/design.md I6).
 */

import type { Publisher } from '@sluice/engine';
import { type ClaimedDelivery, perTurn } from '@sluice/store';
import { type ConnectionOptions, Queue } from 'bullmq';
import type { Keys } from './keys.ts';

export const DELIVERY_QUEUE = 'deliveries';

/** Deliveries per job unless configured (`SLUICE_JOB_DELIVERIES`). */
const JOB_DELIVERIES = 10;

/** A job's data: deliveries of one tenant, each destination's in claim order. */
interface DeliveryJob {
  deliveries: ClaimedDelivery[];
  /** Their tenant (absent in a job published before jobs were kept to one tenant). */
  tenantId?: string;
}

/** A job's tenant, when it says. */
export function tenantOfJob(data: JobData): string | undefined {
  return 'deliveries' in data ? data.tenantId : undefined;
}

/** One tick's publish: its destination's tenant and what it claimed. */
interface Batch {
  tenantId: string | undefined;
  deliveries: ClaimedDelivery[];
}

/** A job published before jobs carried several deliveries held one delivery as its data. */
export type JobData = DeliveryJob | ClaimedDelivery;

export function deliveriesOf(data: JobData): ClaimedDelivery[] {
  return 'deliveries' in data ? data.deliveries : [data];
}

export interface DeliveryQueueOptions {
  /** connection.ts `bullConnection`: options for one server, or a cluster's `Cluster`. */
  connection: ConnectionOptions;
  /** The shards and each one's BullMQ prefix (its keys never mix with ours). */
  keys: Keys;
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
  /** Shard n's queue at n. */
  readonly queues: Queue<JobData>[];
  private readonly keys: Keys;
  private readonly jobDeliveries: number;
  private readonly batches = perTurn<Batch, undefined>((batches) => this.addBulk(batches), 200);

  constructor(options: PublisherOptions) {
    this.keys = options.keys;
    this.jobDeliveries = options.jobDeliveries ?? JOB_DELIVERIES;
    this.queues = options.keys.allShards().map(
      (shard) =>
        new Queue<JobData>(DELIVERY_QUEUE, {
          connection: options.connection,
          prefix: options.keys.bullPrefix(shard),
          // A job fails only when the worker could not start its request (the store or Redis
          // did not answer): BullMQ tries it again shortly. A failed request is not a failed
          // job; its retry is ours, through the rate limiter.
          defaultJobOptions: {
            attempts: 5,
            backoff: { type: 'exponential', delay: 500 },
            removeOnComplete: true,
            removeOnFail: 1_000,
          },
        }),
    );
  }

  /**
   * The ticks of one turn publish in one `addBulk` per shard (one MULTI, one round trip
   * each). `perTurn` gathers them, as the store's claims (store-postgres claim.ts); a failed
   * `addBulk` fails every tick in it, and each tick's deliveries return to pending after the
   * lease.
   */
  async publish(_destinationId: string, deliveries: ClaimedDelivery[], tenantId?: string): Promise<void> {
    await this.batches.load({ tenantId, deliveries });
  }

  private async addBulk(batches: readonly Batch[]): Promise<undefined[]> {
    // Per shard, per tenant: a worker hands back the job of a tenant whose slots hang
    // (delivery-worker.ts), which must not carry another tenant's deliveries.
    const byShard = new Map<number, Map<string | undefined, ClaimedDelivery[]>>();
    for (const { tenantId, deliveries } of batches)
      for (const delivery of deliveries) {
        const shard = this.keys.shardOf(delivery.destinationId);
        let tenants = byShard.get(shard);
        if (tenants === undefined) {
          tenants = new Map();
          byShard.set(shard, tenants);
        }
        const list = tenants.get(tenantId);
        if (list) list.push(delivery);
        else tenants.set(tenantId, [delivery]);
      }
    const publishedAt = Date.now();
    await Promise.all(
      [...byShard].map(([shard, tenants]) => {
        // The ticks' deliveries one after the other (each tick's in claim order), cut into
        // jobs: a steady trickle over a tenant's many destinations — one delivery per tick —
        // fills jobs too.
        const jobs: { name: string; data: DeliveryJob; opts: { jobId: string } }[] = [];
        for (const [tenantId, deliveries] of tenants)
          for (let i = 0; i < deliveries.length; i += this.jobDeliveries) {
            const chunk = deliveries.slice(i, i + this.jobDeliveries);
            // A delivery is claimed into one job per publish.
            jobs.push({
              name: 'deliver',
              data: tenantId === undefined ? { deliveries: chunk } : { deliveries: chunk, tenantId },
              opts: { jobId: jobIdOf(chunk[0]!, publishedAt) },
            });
          }
        return this.queues[shard]!.addBulk(jobs);
      }),
    );
    return batches.map(() => undefined);
  }

  /**
   * Which of these claimed deliveries are still in a job waiting, active or delayed in a
   * queue (a completed job is removed, a failed one is not live). The sweeper asks only when
   * claims are past their lease (a crash, rare), so the queues are listed only then — never
   * at every sweep, which would read every job's payload each time.
   */
  async liveOf(claims: readonly { id: string; attempts: number }[]): Promise<Set<string>> {
    if (claims.length === 0) return new Set();
    const live = new Set<string>();
    for (const queue of this.queues) {
      const jobs = await queue.getJobs(['wait', 'active', 'delayed', 'prioritized'], 0, -1);
      for (const job of jobs) if (job?.data) for (const d of deliveriesOf(job.data)) live.add(d.id);
    }
    return new Set(claims.flatMap((c) => (live.has(c.id) ? [c.id] : [])));
  }

  /** Jobs waiting for a worker, over every shard: the autoscaling signal. */
  async depth(): Promise<number> {
    const counts = await Promise.all(
      this.queues.map((q) => q.getJobCounts('wait', 'prioritized', 'delayed')),
    );
    return counts.reduce((sum, c) => sum + (c.wait ?? 0) + (c.prioritized ?? 0) + (c.delayed ?? 0), 0);
  }

  async close(): Promise<void> {
    await Promise.all(this.queues.map((q) => q.close()));
  }
}
