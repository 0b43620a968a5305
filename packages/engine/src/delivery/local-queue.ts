/**
 * The single box's delivery queue, in process: a FIFO of published deliveries drained by up
 * to `concurrency` concurrent requests, each run by the shared DeliveryRunner.
 *
 * A delivery published ahead of its window's room (`notBefore`, docs/adr/0012) waits apart and
 * holds none of the `concurrency` meanwhile (a backlog of such waits would otherwise stall the
 * requests that could start now); when its slot frees it goes first, ahead of the FIFO: its
 * destination's window cycle is what publishing ahead keeps short.
 *
 * A delivery's id stays in `live` from its publish until its request is over: the sweeper
 * never requeues one of those.
 */

import type { ClaimedDelivery } from '@sluice/store';
import type { Publisher } from '../tick/tick.ts';
import type { DeliveryRunner } from './runner.ts';

export class LocalQueue implements Publisher {
  readonly live = new Set<string>();
  private jobs: ClaimedDelivery[] = [];
  private head = 0;
  private active = 0;
  /** Published ahead, waiting for their `notBefore`. */
  private parked = 0;
  /** Published ahead and due: they start before the FIFO. */
  private due: ClaimedDelivery[] = [];
  private stopping = false;
  private readonly drained: (() => void)[] = [];
  private readonly runner: DeliveryRunner;
  private readonly concurrency: number;
  private readonly onError: (err: unknown) => void;
  private readonly clock: () => number;

  constructor(
    runner: DeliveryRunner,
    concurrency: number,
    onError: (err: unknown) => void,
    clock: () => number = Date.now,
  ) {
    this.runner = runner;
    this.concurrency = concurrency;
    this.onError = onError;
    this.clock = clock;
  }

  get depth(): number {
    return this.jobs.length - this.head + this.parked + this.due.length;
  }

  async publish(_destinationId: string, deliveries: ClaimedDelivery[]): Promise<void> {
    const now = this.clock();
    for (const delivery of deliveries) {
      this.live.add(delivery.id);
      if (delivery.notBefore === undefined) {
        this.jobs.push(delivery);
        continue;
      }
      const wait = delivery.notBefore - now;
      if (wait <= 0) {
        this.due.push(delivery);
        continue;
      }
      // The runner checks `notBefore` again before the start (a timer may fire early).
      this.parked++;
      setTimeout(() => {
        this.parked--;
        this.due.push(delivery);
        this.pump();
      }, Math.ceil(wait));
    }
    this.pump();
  }

  /** Starts no more requests and waits for those in flight. */
  async stop(): Promise<void> {
    this.stopping = true;
    if (this.active > 0) await new Promise<void>((resolve) => this.drained.push(resolve));
  }

  /** The next delivery to start: a due one published ahead, else the FIFO's head. */
  private next(): ClaimedDelivery | undefined {
    if (this.due.length > 0) return this.due.shift();
    if (this.head >= this.jobs.length) return undefined;
    const delivery = this.jobs[this.head] as ClaimedDelivery;
    this.jobs[this.head++] = undefined as unknown as ClaimedDelivery;
    if (this.head > 4_096 && this.head * 2 > this.jobs.length) {
      this.jobs = this.jobs.slice(this.head);
      this.head = 0;
    }
    return delivery;
  }

  private pump(): void {
    while (!this.stopping && this.active < this.concurrency) {
      const delivery = this.next();
      if (delivery === undefined) return;
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
