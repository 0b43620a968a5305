/**
 * A pool of request slots shared fairly by tenants, then by destinations (docs/adr/0014;
 * docs/operations.md "Tenants' shares of the delivery slots"): the single box's delivery
 * queue (local-queue.ts) and each distributed delivery worker draw on one, so both shapes
 * share slots by one policy.
 *
 * - A request waits for a slot in its destination's FIFO; the next slot goes round robin to
 *   the next tenant with a request waiting, and within it to its next destination.
 * - A tenant takes a slot only within its share (`@sluice/core` tenant-share.ts): a tenant
 *   whose receivers hang or half answer holds at most its share, and the others' requests
 *   start in the rest at once.
 * - `first`: a request published ahead of its window's room, whose slot just freed (docs/adr/0012),
 *   goes ahead of its tenant's others: its destination's window cycle is what publishing
 *   ahead keeps short.
 */

import { heldBySlowRequests, mayTakeSlot } from '@sluice/core';

/** A taken slot: given back once its request is over. */
export type Release = () => void;

interface Waiter {
  grant: (release: Release) => void;
}

export interface TakeOptions {
  /** Published ahead and due (docs/adr/0012): before its tenant's others. */
  first?: boolean;
  /** Stops the wait (rejects with the signal's reason) unless the slot was granted already. */
  signal?: AbortSignal;
  /** Called as the slot is granted, before the promise's callbacks run. */
  onGrant?: () => void;
}

interface TenantSlots {
  /** Its requests in flight: token → start (ms), oldest first (starts only ever grow). */
  running: Map<number, number>;
  /** Published ahead and due: they go before its destinations' FIFOs. */
  first: Waiter[];
  /** Destination → its waiting requests; a Map's order is the round robin. */
  fifos: Map<string, Waiter[]>;
  waiting: number;
}

export interface FairSlotsOptions {
  /** The pool's size. */
  size: number;
  /** A request in flight this long or longer is not quick (`SLUICE_TENANT_QUICK_MS`). */
  quickMs: number;
  clock?: () => number;
}

export class FairSlots {
  readonly size: number;
  private readonly quickMs: number;
  private readonly clock: () => number;
  /** Tenants holding or waiting for slots. */
  private readonly tenants = new Map<string, TenantSlots>();
  /** Those with requests waiting; a Map's order is the round robin. */
  private readonly ring = new Map<string, TenantSlots>();
  private taken = 0;
  private waitingAll = 0;
  private nextToken = 0;
  private stopped = false;

  constructor(options: FairSlotsOptions) {
    this.size = options.size;
    this.quickMs = options.quickMs;
    this.clock = options.clock ?? Date.now;
  }

  /** Slots free now. */
  get free(): number {
    return this.size - this.taken;
  }

  /** Requests waiting for a slot. */
  get waiting(): number {
    return this.waitingAll;
  }

  /** Resolves with the slot once `tenant` may take one (never, once stopped). */
  take(tenant: string, destinationId: string, options: TakeOptions = {}): Promise<Release> {
    const { first = false, signal } = options;
    return new Promise((resolve, reject) => {
      if (signal?.aborted) {
        reject(signal.reason);
        return;
      }
      const t = this.tenant(tenant);
      const waiter: Waiter = {
        grant: (release) => {
          signal?.removeEventListener('abort', cancel);
          options.onGrant?.();
          resolve(release);
        },
      };
      const cancel = () => {
        if (this.withdraw(tenant, t, destinationId, waiter, first)) reject(signal?.reason);
      };
      signal?.addEventListener('abort', cancel, { once: true });
      if (first) t.first.push(waiter);
      else {
        let fifo = t.fifos.get(destinationId);
        if (fifo === undefined) {
          fifo = [];
          t.fifos.set(destinationId, fifo);
        }
        fifo.push(waiter);
      }
      t.waiting++;
      this.waitingAll++;
      if (!this.ring.has(tenant)) this.ring.set(tenant, t);
      this.pump();
    });
  }

  /** Takes a waiter out of its queue; false when it is not there (granted already). */
  private withdraw(
    id: string,
    t: TenantSlots,
    destinationId: string,
    waiter: Waiter,
    first: boolean,
  ): boolean {
    const queue = first ? t.first : t.fifos.get(destinationId);
    const at = queue?.indexOf(waiter) ?? -1;
    if (queue === undefined || at < 0) return false;
    queue.splice(at, 1);
    if (!first && queue.length === 0) t.fifos.delete(destinationId);
    t.waiting--;
    this.waitingAll--;
    if (t.waiting === 0) this.ring.delete(id);
    if (t.running.size === 0 && t.waiting === 0) this.tenants.delete(id);
    // One tenant fewer may raise the others' shares.
    this.pump();
    return true;
  }

  /**
   * Whether `tenant` holds its share with requests that are not quick: it gets no slot before
   * one of them ends.
   */
  heldBySlow(tenant: string): boolean {
    const t = this.tenants.get(tenant);
    if (t === undefined) return false;
    return heldBySlowRequests({
      slots: this.size,
      tenants: this.tenants.size,
      held: t.running.size,
      oldestMs: this.oldestMs(t),
      quickMs: this.quickMs,
    });
  }

  /** The tenants that hold their share with requests that are not quick (`heldBySlow`). */
  heldTenants(): string[] {
    return [...this.tenants.keys()].filter((id) => this.heldBySlow(id));
  }

  /** Grants no more slots (the pool's owner is closing). */
  stop(): void {
    this.stopped = true;
  }

  private tenant(id: string): TenantSlots {
    let t = this.tenants.get(id);
    if (t === undefined) {
      t = { running: new Map(), first: [], fifos: new Map(), waiting: 0 };
      this.tenants.set(id, t);
    }
    return t;
  }

  private oldestMs(t: TenantSlots): number {
    const oldest = t.running.values().next();
    return oldest.done ? 0 : Math.max(0, this.clock() - oldest.value);
  }

  private mayTake(t: TenantSlots): boolean {
    return mayTakeSlot({
      slots: this.size,
      free: this.free,
      tenants: this.tenants.size,
      held: t.running.size,
      oldestMs: this.oldestMs(t),
      quickMs: this.quickMs,
    });
  }

  /** Grants slots round robin to the tenants with requests waiting, each within its share. */
  private pump(): void {
    while (!this.stopped && this.free > 0 && this.waitingAll > 0) {
      let granted = false;
      for (const [id, t] of this.ring) {
        if (!this.mayTake(t)) continue;
        this.grant(id, t);
        granted = true;
        break;
      }
      if (!granted) return;
    }
  }

  private grant(id: string, t: TenantSlots): void {
    let waiter = t.first.shift();
    if (waiter === undefined) {
      const [destinationId, fifo] = t.fifos.entries().next().value as [string, Waiter[]];
      waiter = fifo.shift() as Waiter;
      t.fifos.delete(destinationId);
      if (fifo.length > 0) t.fifos.set(destinationId, fifo);
    }
    t.waiting--;
    this.waitingAll--;
    this.taken++;
    const token = this.nextToken++;
    t.running.set(token, this.clock());
    // Its turn is over: to the end of the round robin, while it has more waiting.
    this.ring.delete(id);
    if (t.waiting > 0) this.ring.set(id, t);
    let released = false;
    waiter.grant(() => {
      if (released) return;
      released = true;
      this.taken--;
      t.running.delete(token);
      if (t.running.size === 0 && t.waiting === 0) this.tenants.delete(id);
      this.pump();
    });
  }
}
