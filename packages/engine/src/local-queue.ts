/**
 * The single box's delivery queue, in process: a FIFO of published deliveries drained by up
 * to `concurrency` concurrent requests, each run by the shared DeliveryRunner.
 *
 * A delivery's id stays in `live` from its publish until its request is over: the sweeper
 * never requeues one of those.
 */

import type { Publisher } from './limiter.ts';
import type { DeliveryRunner } from './runner.ts';
import type { ClaimedDelivery } from './store.ts';

export class LocalQueue implements Publisher {
  readonly live = new Set<string>();
  private jobs: ClaimedDelivery[] = [];
  private head = 0;
  private active = 0;
  private stopping = false;
  private readonly drained: (() => void)[] = [];
  private readonly runner: DeliveryRunner;
  private readonly concurrency: number;
  private readonly onError: (err: unknown) => void;

  constructor(runner: DeliveryRunner, concurrency: number, onError: (err: unknown) => void) {
    this.runner = runner;
    this.concurrency = concurrency;
    this.onError = onError;
  }

  get depth(): number {
    return this.jobs.length - this.head;
  }

  async publish(_destinationId: string, deliveries: ClaimedDelivery[]): Promise<void> {
    for (const delivery of deliveries) {
      this.live.add(delivery.id);
      this.jobs.push(delivery);
    }
    this.pump();
  }

  /** Starts no more requests and waits for those in flight. */
  async stop(): Promise<void> {
    this.stopping = true;
    if (this.active > 0) await new Promise<void>((resolve) => this.drained.push(resolve));
  }

  private pump(): void {
    while (!this.stopping && this.active < this.concurrency && this.head < this.jobs.length) {
      const delivery = this.jobs[this.head] as ClaimedDelivery;
      this.jobs[this.head++] = undefined as unknown as ClaimedDelivery;
      if (this.head > 4_096 && this.head * 2 > this.jobs.length) {
        this.jobs = this.jobs.slice(this.head);
        this.head = 0;
      }
      this.active++;
      this.runner
        .run(delivery)
        .catch(this.onError)
        .finally(() => {
          this.live.delete(delivery.id);
          this.active--;
          if (this.stopping && this.active === 0) for (const resolve of this.drained.splice(0)) resolve();
          this.pump();
        });
    }
  }
}
