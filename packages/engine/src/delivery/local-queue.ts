/**
 * The single box's delivery queue, in process: published deliveries drained by the pool's
 * request slots (`FairSlots`, `SLUICE_DELIVERY_CONCURRENCY` of them), each run by the shared
 * DeliveryRunner.
 *
 * Fair across tenants, then destinations (fair-slots.ts, docs/adr/0014): each destination's
 * deliveries wait in their own FIFO, the next slot goes round robin to the next tenant with
 * work and within it to its next destination, and no tenant holds more than its share of the
 * slots. A destination that published a long run at once (a high limit, a burst) then delays
 * another's next request by at most one request per destination ahead of it, never by its
 * whole run; a tenant whose receivers hang holds its share, not the pool.
 *
 * A delivery published ahead of its window's room (`notBefore`, docs/adr/0012) waits apart and
 * holds none of the slots meanwhile (a backlog of such waits would otherwise stall the
 * requests that could start now); when its slot frees it goes ahead of its tenant's others.
 *
 * A delivery's id stays in `live` from its publish until its request is over: the sweeper
 * never requeues one of those.
 */

import type { ClaimedDelivery } from '@sluice/store';
import type { Publisher } from '../tick/tick.ts';
import { FairSlots } from './fair-slots.ts';
import type { DeliveryRunner } from './runner.ts';

export interface LocalQueueOptions {
  /** The pool's request slots (`SLUICE_DELIVERY_CONCURRENCY`). */
  concurrency: number;
  /** A request in flight this long is not quick (`SLUICE_TENANT_QUICK_MS`, core tenant-share.ts). */
  quickMs?: number | undefined;
  onError: (err: unknown) => void;
  clock?: () => number;
  /**
   * A destination's tenant where a publish does not say (undefined: not known; such
   * destinations share one tenant's turn).
   */
  tenantOf?: (destinationId: string) => string | undefined;
}

/** `SLUICE_TENANT_QUICK_MS`'s default. */
export const TENANT_QUICK_MS = 1_000;

export class LocalQueue implements Publisher {
  readonly live = new Set<string>();
  private readonly slots: FairSlots;
  /** Published ahead, waiting for their `notBefore`. */
  private parked = 0;
  private active = 0;
  private stopping = false;
  private readonly drained: (() => void)[] = [];
  private readonly runner: DeliveryRunner;
  private readonly onError: (err: unknown) => void;
  private readonly clock: () => number;
  private readonly tenantOf: (destinationId: string) => string | undefined;

  constructor(runner: DeliveryRunner, options: LocalQueueOptions) {
    this.runner = runner;
    this.onError = options.onError;
    this.clock = options.clock ?? Date.now;
    this.tenantOf = options.tenantOf ?? (() => undefined);
    this.slots = new FairSlots({
      size: options.concurrency,
      quickMs: options.quickMs ?? TENANT_QUICK_MS,
      clock: this.clock,
    });
  }

  get depth(): number {
    return this.slots.waiting + this.parked;
  }

  async publish(destinationId: string, deliveries: ClaimedDelivery[], tenantId?: string): Promise<void> {
    const now = this.clock();
    const tenant = tenantId ?? this.tenantOf(destinationId) ?? '';
    for (const delivery of deliveries) {
      this.live.add(delivery.id);
      const wait = delivery.notBefore === undefined ? 0 : delivery.notBefore - now;
      if (wait <= 0) {
        this.start(tenant, destinationId, delivery);
        continue;
      }
      // The runner checks `notBefore` again before the start (a timer may fire early).
      this.parked++;
      setTimeout(() => {
        this.parked--;
        this.start(tenant, destinationId, delivery);
      }, Math.ceil(wait));
    }
  }

  /** Whether the tenant's share of the slots is held by requests that are not quick. */
  heldBySlow(tenant: string): boolean {
    return this.slots.heldBySlow(tenant);
  }

  /** Starts no more requests and waits for those in flight. */
  async stop(): Promise<void> {
    this.stopping = true;
    this.slots.stop();
    if (this.active > 0) await new Promise<void>((resolve) => this.drained.push(resolve));
  }

  private start(tenant: string, destinationId: string, delivery: ClaimedDelivery): void {
    if (this.stopping) return;
    void this.slots
      .take(tenant, destinationId, { first: delivery.notBefore !== undefined })
      .then((release) => {
        this.active++;
        this.runner
          .run(delivery)
          .catch(this.onError)
          .finally(() => {
            this.live.delete(delivery.id);
            this.active--;
            release();
            if (this.stopping && this.active === 0) for (const resolve of this.drained.splice(0)) resolve();
          });
      });
  }
}
