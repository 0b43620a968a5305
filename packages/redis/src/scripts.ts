/**
 * Our Lua scripts, loaded from `lua/<name>-<numberOfKeys>.lua` (or `lua/<name>.lua` for a
 * batch over any number of destinations, whose caller passes the number of keys first) with
 * ioredis `defineCommand` (EVALSHA, falling back to EVAL), and typed wrappers: the one place
 * that knows each script's argument order (BullMQ's `scripts.ts` does the same).
 */

import { readdirSync, readFileSync } from 'node:fs';
import type { RateDecision } from '@sluice/core';
import { type PerTurn, perTurn } from '@sluice/store';
import type { RedisClient } from './client.ts';
import type { Keys } from './keys.ts';

const LUA_DIR = new URL('./lua/', import.meta.url);

type ScriptFn = (...args: (string | number)[]) => Promise<unknown>;

export interface ClaimedTick {
  destinationId: string;
  due: number;
  /** The lease token `settle` must show. */
  lease: string;
  /** Its lease had expired: the replica that ran it died or froze mid-tick. */
  takenOver: boolean;
}

/**
 * A script's text with each `-- @include <name>` line replaced by `lua/includes/<name>.lua`:
 * shared snippets are included, not pasted (BullMQ's `includes/`).
 */
function scriptText(file: string): string {
  return readFileSync(new URL(file, LUA_DIR), 'utf8').replace(/^-- @include (\w+)$/gm, (_, name: string) =>
    readFileSync(new URL(`includes/${name}.lua`, LUA_DIR), 'utf8'),
  );
}

const SCRIPT_FILE = /^(\w+?)(?:-(\d+))?\.lua$/;

/**
 * The scripts over any number of destinations (`lua/<name>.lua`), whose first argument is
 * their number of keys. ioredis's auto-pipelining on a cluster groups a command by the node of
 * its first argument, which for these is that number, not a key: one grouped with commands of
 * another node fails their whole pipeline ("All keys in the pipeline should belong to the same
 * slots allocation group"). A cluster connection leaves them out of its auto-pipelines.
 */
export const BATCH_SCRIPTS: readonly string[] = readdirSync(LUA_DIR).flatMap((file) => {
  const match = SCRIPT_FILE.exec(file);
  return match && match[2] === undefined ? [match[1] as string] : [];
});

/** Defines every script on a connection (idempotent per connection). */
export function defineScripts(redis: RedisClient): void {
  const marker = redis as unknown as { sluiceScripts?: boolean };
  if (marker.sluiceScripts) return;
  for (const file of readdirSync(LUA_DIR)) {
    const match = SCRIPT_FILE.exec(file);
    if (!match) continue;
    const lua = scriptText(file);
    redis.defineCommand(
      match[1] as string,
      match[2] === undefined ? { lua } : { numberOfKeys: Number(match[2]), lua },
    );
  }
  marker.sluiceScripts = true;
}

/** Where a settled tick left its destination. */
export type Settled = { state: 'scheduled'; at: number } | { state: 'removed' | 'lost' };

/** A settle script's reply: the due time scheduled at, -1 removed, -2 the lease was lost. */
function settled(reply: number): Settled {
  if (reply === -2) return { state: 'lost' };
  return reply === -1 ? { state: 'removed' } : { state: 'scheduled', at: reply };
}

/**
 * Runs the calls of one turn as one script call per schedule shard of their destinations:
 * `run` gets a shard and its calls in order and answers each; each caller gets its own answer.
 * (Every key of one script must carry one shard's hash tag: Redis Cluster.)
 */
export async function perShard<T extends { destinationId: string }, R>(
  keys: Keys,
  calls: readonly T[],
  run: (shard: number, calls: T[]) => Promise<R[]>,
): Promise<R[]> {
  const groups = new Map<number, { calls: T[]; at: number[] }>();
  for (const [i, call] of calls.entries()) {
    const shard = keys.shardOf(call.destinationId);
    const group = groups.get(shard) ?? { calls: [], at: [] };
    groups.set(shard, group);
    group.calls.push(call);
    group.at.push(i);
  }
  const out: R[] = new Array(calls.length);
  await Promise.all(
    [...groups].map(async ([shard, group]) => {
      const replies = await run(shard, group.calls);
      for (const [j, i] of group.at.entries()) out[i] = replies[j] as R;
    }),
  );
  return out;
}

/** Most calls in one batch script (its reply and arguments stay small). */
export const SCRIPT_BATCH = 200;

interface SettleCall {
  destinationId: string;
  lease: string;
  next: number | null;
}

export class Scripts {
  private readonly redis: RedisClient;
  private readonly keys: Keys;
  /** The settles of one turn, one script call per shard (the ticks of one claim end together). */
  private readonly settles: PerTurn<SettleCall, Settled>;
  /** `settleKick`'s, likewise. */
  private readonly kickingSettles: PerTurn<SettleCall, Settled>;

  constructor(redis: RedisClient, keys: Keys) {
    defineScripts(redis);
    this.redis = redis;
    this.keys = keys;
    this.settles = perTurn((calls) => this.settleBatch(calls), SCRIPT_BATCH);
    this.kickingSettles = perTurn((calls) => this.settleBatch(calls, true), SCRIPT_BATCH);
  }

  private call(name: string): ScriptFn {
    return (this.redis as unknown as Record<string, ScriptFn>)[name] as ScriptFn;
  }

  async claimTicks(
    shard: number,
    now: number,
    leaseMs: number,
    max: number,
  ): Promise<{ ticks: ClaimedTick[]; nextAt: number }> {
    const out = (await this.call('claimTicks').call(
      this.redis,
      this.keys.schedule(shard),
      this.keys.leases(shard),
      Math.floor(now),
      Math.ceil(leaseMs),
      max,
    )) as string[];
    const ticks: ClaimedTick[] = [];
    for (let i = 0; i + 3 < out.length; i += 4) {
      ticks.push({
        destinationId: out[i] as string,
        due: Number(out[i + 1]),
        lease: out[i + 2] as string,
        takenOver: out[i + 3] === '1',
      });
    }
    return { ticks, nextAt: Number(out[out.length - 1]) };
  }

  /** True when the tick moved to the head of its shard's schedule (kick the limiters). */
  async wake(destinationId: string, at: number): Promise<boolean> {
    const result = await this.call('wake').call(
      this.redis,
      ...this.keys.scheduleKeys(destinationId),
      destinationId,
      Math.ceil(at),
    );
    return result === 1;
  }

  /**
   * A sooner-only wake at the earliest moment the window (and a burst allowance's bucket,
   * and past an adaptive hold) may have room, kicking the limiters when it lands at the head
   * of the schedule. Returns the due time asked for. `limit` is the window's cap. With
   * `tickLeaseMs`, a wake that finds room now and no tick running claims the tick instead
   * (docs/adr/0013): `lease` is then its token, for `settleKick`.
   */
  async wakeForWork(
    destinationId: string,
    now: number,
    room: {
      limit: number;
      periodMs: number;
      windowMarginMs: number;
      queuedExpiryMs: number;
      /** The burst allowance and its emission interval; absent: none. */
      bucket?: { burst: number; emissionMs: number } | undefined;
      /** The configured limit when adaptive pacing is on (its hold is honoured). */
      adaptiveLimit?: number | undefined;
    },
    tickLeaseMs = 0,
  ): Promise<{ at: number; lease: string | null }> {
    const [at, lease] = (await this.call('wakeForWork').call(
      this.redis,
      ...this.keys.scheduleKeys(destinationId),
      this.keys.queued(destinationId),
      this.keys.sends(destinationId),
      this.keys.pace(destinationId),
      destinationId,
      Math.floor(now),
      room.limit,
      room.periodMs,
      room.windowMarginMs,
      room.queuedExpiryMs,
      this.keys.kickChannel(),
      room.bucket?.burst ?? 0,
      room.bucket?.emissionMs ?? 0,
      room.adaptiveLimit ?? 0,
      Math.ceil(tickLeaseMs),
    )) as [string, string];
    return { at: Number(at), lease: lease === '' ? null : lease };
  }

  /** Deletes `key` if it still holds `value`; whether it did. */
  async delIfEqual(key: string, value: string): Promise<boolean> {
    return Number(await this.call('delIfEqual').call(this.redis, key, value)) === 1;
  }

  /** Extends a running tick's lease to `until` (the new token); false: it is no longer this tick's. */
  async renewLease(destinationId: string, lease: string, until: number): Promise<boolean> {
    const [, leases] = this.keys.scheduleKeys(destinationId);
    return Number(await this.call('renewLease').call(this.redis, leases, destinationId, lease, until)) === 1;
  }

  /**
   * Ends a tick: `next` null shuts the destination down. Returns where it now stands: its
   * due time when scheduled (a wake during the tick may have made it sooner than `next`).
   */
  settle(destinationId: string, lease: string, next: number | null): Promise<Settled> {
    return this.settles.load({ destinationId, lease, next });
  }

  /**
   * Ends one tick that a process without schedule loops ran (the API's), as `settle`, and
   * kicks the rate limiters when its next tick is at the head of the schedule. The settles
   * of one turn share one script call per shard, as `settle`'s.
   */
  settleKick(destinationId: string, lease: string, next: number | null): Promise<Settled> {
    return this.kickingSettles.load({ destinationId, lease, next });
  }

  /** Takes `n` events from a tenant's rate bucket if they fit (core `takeRate`, in Redis). */
  async takeRate(tenantId: string, n: number, eventsPerSecond: number, now: number): Promise<RateDecision> {
    const [ok, value] = (await this.call('takeRate').call(
      this.redis,
      this.keys.tenantRate(tenantId),
      n,
      eventsPerSecond,
      now,
    )) as [number, string];
    if (Number(ok) === 1) return { ok: true, tat: Number(value) };
    return { ok: false, retryAfterMs: value === '' ? null : Number(value) };
  }

  /** `kick`: publish the head of the schedule on the kick channel when a settle lands there. */
  private settleBatch(calls: readonly SettleCall[], kick = false): Promise<Settled[]> {
    return perShard(this.keys, calls, async (shard, group): Promise<Settled[]> => {
      const replies = (await this.call('settleBatch').call(
        this.redis,
        this.keys.schedule(shard),
        this.keys.leases(shard),
        this.keys.woken(shard),
        kick ? this.keys.kickChannel() : '',
        ...group.flatMap((c) => [c.destinationId, c.lease, c.next === null ? -1 : Math.ceil(c.next)]),
      )) as number[];
      return replies.map((reply) => settled(Number(reply)));
    });
  }
}
