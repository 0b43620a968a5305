/**
 * The single box's delivery queue, in process: published deliveries drained by up to
 * `concurrency` concurrent requests, each run by the shared DeliveryRunner.
 *
 * Fair across tenants, then destinations (docs/adr/0014): each destination's deliveries wait
 * in their own FIFO, and the next to start is taken round robin — the next tenant with work,
 * and within it its next destination with work. A destination that published a long run at
 * once (a high limit, a burst) then delays another's next request by at most one request per
 * destination ahead of it, never by its whole run.
 *
 * A delivery published ahead of its window's room (`notBefore`, docs/adr/0012) waits apart and
 * holds none of the `concurrency` meanwhile (a backlog of such waits would otherwise stall the
 * requests that could start now); when its slot frees it goes first, ahead of the others: its
 * destination's window cycle is what publishing ahead keeps short.
 *
 * A delivery's id stays in `live` from its publish until its request is over: the sweeper
 * never requeues one of those.
 */

import type { ClaimedDelivery } from '@sluice/store';
import type { Publisher } from '../tick/tick.ts';
import type { DeliveryRunner } from './runner.ts';

/** One destination's deliveries waiting for a slot, oldest first. */
interface Fifo {
  items: ClaimedDelivery[];
  head: number;
}

export class LocalQueue implements Publisher {
  readonly live = new Set<string>();
  /**
   * Tenant → destination → its FIFO; a Map's order is the round robin: the first is next,
   * and one that still has work after its turn goes to the end. Empty ones are dropped.
   */
  private readonly ring = new Map<string, Map<string, Fifo>>();
  private waiting = 0;
  private active = 0;
  /** Published ahead, waiting for their `notBefore`. */
  private parked = 0;
  /** Published ahead and due: they start before the round robin. */
  private due: ClaimedDelivery[] = [];
  private stopping = false;
  private readonly drained: (() => void)[] = [];
  private readonly runner: DeliveryRunner;
  private readonly concurrency: number;
  private readonly onError: (err: unknown) => void;
  private readonly clock: () => number;
  /** A destination's tenant (undefined: not known; its destinations share one turn). */
  private readonly tenantOf: (destinationId: string) => string | undefined;

  constructor(
    runner: DeliveryRunner,
    concurrency: number,
    onError: (err: unknown) => void,
    clock: () => number = Date.now,
    tenantOf: (destinationId: string) => string | undefined = () => undefined,
  ) {
    this.runner = runner;
    this.concurrency = concurrency;
    this.onError = onError;
    this.clock = clock;
    this.tenantOf = tenantOf;
  }

  get depth(): number {
    return this.waiting + this.parked + this.due.length;
  }

  async publish(destinationId: string, deliveries: ClaimedDelivery[]): Promise<void> {
    const now = this.clock();
    for (const delivery of deliveries) {
      this.live.add(delivery.id);
      if (delivery.notBefore === undefined) {
        this.enqueue(destinationId, delivery);
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

  private enqueue(destinationId: string, delivery: ClaimedDelivery): void {
    const tenant = this.tenantOf(destinationId) ?? '';
    let destinations = this.ring.get(tenant);
    if (destinations === undefined) {
      destinations = new Map();
      this.ring.set(tenant, destinations);
    }
    let fifo = destinations.get(destinationId);
    if (fifo === undefined) {
      fifo = { items: [], head: 0 };
      destinations.set(destinationId, fifo);
    }
    fifo.items.push(delivery);
    this.waiting++;
  }

  /**
   * The next delivery to start: a due one published ahead, else the head of the next
   * destination's FIFO of the next tenant (round robin).
   */
  private next(): ClaimedDelivery | undefined {
    if (this.due.length > 0) return this.due.shift();
    const first = this.ring.entries().next();
    if (first.done) return undefined;
    const [tenant, destinations] = first.value;
    const [destinationId, fifo] = destinations.entries().next().value as [string, Fifo];
    const delivery = fifo.items[fifo.head] as ClaimedDelivery;
    fifo.items[fifo.head++] = undefined as unknown as ClaimedDelivery;
    this.waiting--;
    destinations.delete(destinationId);
    if (fifo.head < fifo.items.length) {
      if (fifo.head > 1_024 && fifo.head * 2 > fifo.items.length) {
        fifo.items = fifo.items.slice(fifo.head);
        fifo.head = 0;
      }
      destinations.set(destinationId, fifo);
    }
    this.ring.delete(tenant);
    if (destinations.size > 0) this.ring.set(tenant, destinations);
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
