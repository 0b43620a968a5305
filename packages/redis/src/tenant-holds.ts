/**
 * What each delivery worker's tenant shares look like, for the processes that run ticks
 * (docs/operations.md "Tenants' shares of the delivery slots"). A worker whose tenant holds
 * its share of the worker's slots with requests that are not quick (its receivers hang)
 * hands that tenant's jobs back to the queue; when every worker does, a tick that publishes
 * more of the tenant's deliveries only makes jobs to be handed back, again and again, on
 * cores the other tenants need. So each worker writes, every `intervalMs`, the tenants its
 * slots hold that way, in one hash (`Keys.tenantsHeld`: field = the worker, value = when and
 * which), and a tick holds back a tenant that every live worker lists.
 *
 * Advisory, never a bound: a worker that stops writing drops out after STALE_MS (its field
 * is ignored, and deleted by a reader once long stale), and a tenant listed by
 * some workers but not all is published to as before (a worker with room takes its jobs,
 * the others hand them back). One-key commands, so a Redis Cluster serves them from one node.
 */

import { randomBytes } from 'node:crypto';
import type { RedisClient } from './client.ts';
import type { Keys } from './keys.ts';

/** How often a worker writes its entry. */
export const TENANT_HOLDS_INTERVAL_MS = 500;
/** An entry older than this is a worker gone (or stalled): not counted. */
const STALE_MS = 4 * TENANT_HOLDS_INTERVAL_MS;
/** How long a reader's view is used before it reads the hash again. */
const READ_EVERY_MS = 250;

interface Entry {
  /** When the worker wrote it (ms since the epoch). */
  at: number;
  /** Its tenants held by slow requests. */
  held: string[];
}

export interface TenantHoldsWriter {
  close(): Promise<void>;
}

/** A delivery worker's side: writes `held()` every `intervalMs` until closed. */
export function writeTenantHolds(options: {
  redis: RedisClient;
  keys: Keys;
  held: () => string[];
  intervalMs?: number;
  clock?: () => number;
}): TenantHoldsWriter {
  const { redis, keys } = options;
  const clock = options.clock ?? Date.now;
  const intervalMs = options.intervalMs ?? TENANT_HOLDS_INTERVAL_MS;
  const key = keys.tenantsHeld();
  const field = randomBytes(8).toString('hex');
  const write = (): Promise<unknown> => {
    const entry: Entry = { at: clock(), held: options.held() };
    return redis
      .multi()
      .hset(key, field, JSON.stringify(entry))
      .pexpire(key, STALE_MS * 5)
      .exec()
      .catch(() => undefined); // advisory: the next write tries again
  };
  void write();
  const timer = setInterval(() => void write(), intervalMs);
  timer.unref();
  return {
    async close() {
      clearInterval(timer);
      await redis.hdel(key, field).catch(() => undefined);
    },
  };
}

/** Whether the tenant is held on every live worker. */
export function heldEverywhere(entries: readonly Entry[], tenantId: string, now: number): boolean {
  const live = entries.filter((e) => now - e.at <= STALE_MS);
  return live.length > 0 && live.every((e) => e.held.includes(tenantId));
}

/**
 * A ticking process's side: `held(tenant)` answers from the view it read last, at once,
 * and reads the hash again in the background once that view is `READ_EVERY_MS` old.
 */
export class TenantHoldsReader {
  private entries: Entry[] = [];
  private readAt = Number.NEGATIVE_INFINITY;
  private reading: Promise<void> | undefined;
  private readonly redis: RedisClient;
  private readonly key: string;
  private readonly clock: () => number;

  constructor(options: { redis: RedisClient; keys: Keys; clock?: () => number }) {
    this.redis = options.redis;
    this.key = options.keys.tenantsHeld();
    this.clock = options.clock ?? Date.now;
  }

  held(tenantId: string): boolean {
    const now = this.clock();
    if (now - this.readAt >= READ_EVERY_MS) this.refresh(now);
    return heldEverywhere(this.entries, tenantId, now);
  }

  /** Reads the hash now (and resolves once read); `held` calls it as its view ages. */
  refresh(now = this.clock()): Promise<void> {
    if (this.reading) return this.reading;
    this.readAt = now;
    this.reading = this.redis
      .hgetall(this.key)
      .then((all) => {
        const entries: Entry[] = [];
        const gone: string[] = [];
        for (const [field, v] of Object.entries(all)) {
          let e: Entry | undefined;
          try {
            e = JSON.parse(v) as Entry;
          } catch {
            e = undefined;
          }
          const valid = e !== undefined && typeof e.at === 'number' && Array.isArray(e.held);
          // A worker killed without closing leaves its field: dropped once long stale.
          if (!valid || now - (e as Entry).at > 10 * STALE_MS) gone.push(field);
          else entries.push(e as Entry);
        }
        this.entries = entries;
        if (gone.length > 0) void this.redis.hdel(this.key, ...gone).catch(() => undefined);
      })
      .catch(() => {
        // Redis unreachable: hold nothing back (the workers' own shares still hold).
        this.entries = [];
      })
      .finally(() => {
        this.reading = undefined;
      });
    return this.reading;
  }
}
