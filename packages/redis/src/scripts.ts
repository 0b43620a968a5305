/**
 * Our Lua scripts, loaded from `lua/<name>-<numberOfKeys>.lua` (or `lua/<name>.lua` for a
 * batch over any number of destinations, whose caller passes the number of keys first) with
 * ioredis `defineCommand` (EVALSHA, falling back to EVAL), and typed wrappers: the one place
 * that knows each script's argument order (BullMQ's `scripts.ts` does the same).
 */

import { readdirSync, readFileSync } from 'node:fs';
import { type PerTurn, perTurn } from '@sluice/engine';
import type { Redis } from 'ioredis';
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

/** Defines every script on a connection (idempotent per connection). */
export function defineScripts(redis: Redis): void {
  const marker = redis as unknown as { sluiceScripts?: boolean };
  if (marker.sluiceScripts) return;
  for (const file of readdirSync(LUA_DIR)) {
    const match = /^(\w+?)(?:-(\d+))?\.lua$/.exec(file);
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

/** Calls of one turn grouped by the shard of each one's destination, each group in call order. */
export function byShard<T extends { destinationId: string }>(
  keys: Keys,
  calls: readonly T[],
): { shard: number; calls: T[]; at: number[] }[] {
  if (keys.shards === 1) return [{ shard: 0, calls: [...calls], at: calls.map((_, i) => i) }];
  const groups = new Map<number, { shard: number; calls: T[]; at: number[] }>();
  for (const [i, call] of calls.entries()) {
    const shard = keys.shardOf(call.destinationId);
    let group = groups.get(shard);
    if (!group) {
      group = { shard, calls: [], at: [] };
      groups.set(shard, group);
    }
    group.calls.push(call);
    group.at.push(i);
  }
  return [...groups.values()];
}

/** Most calls in one batch script (its reply and arguments stay small). */
export const SCRIPT_BATCH = 200;

interface SettleCall {
  destinationId: string;
  lease: string;
  next: number | null;
}

export class Scripts {
  private readonly redis: Redis;
  private readonly keys: Keys;
  /** The settles of one turn, one script call per shard (the ticks of one claim end together). */
  private readonly settles: PerTurn<SettleCall, Settled>;

  constructor(redis: Redis, keys: Keys) {
    defineScripts(redis);
    this.redis = redis;
    this.keys = keys;
    this.settles = perTurn((calls) => this.settleBatch(calls), SCRIPT_BATCH);
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
   * of the schedule. Returns the due time asked for. `limit` is the window's cap.
   */
  async wakeForWork(
    destinationId: string,
    now: number,
    room: {
      limit: number;
      periodMs: number;
      windowMarginMs: number;
      claimLeaseMs: number;
      /** The burst allowance and its emission interval; absent: none. */
      bucket?: { burst: number; emissionMs: number } | undefined;
      /** The configured limit when adaptive pacing is on (its hold is honoured). */
      adaptiveLimit?: number | undefined;
    },
  ): Promise<number> {
    return Number(
      await this.call('wakeForWork').call(
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
        room.claimLeaseMs,
        this.keys.kickChannel(),
        room.bucket?.burst ?? 0,
        room.bucket?.emissionMs ?? 0,
        room.adaptiveLimit ?? 0,
      ),
    );
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

  private async settleBatch(calls: readonly SettleCall[]): Promise<Settled[]> {
    const out: Settled[] = new Array(calls.length);
    await Promise.all(
      byShard(this.keys, calls).map(async (group) => {
        const replies = (await this.call('settleBatch').call(
          this.redis,
          this.keys.schedule(group.shard),
          this.keys.leases(group.shard),
          this.keys.woken(group.shard),
          ...group.calls.flatMap((c) => [c.destinationId, c.lease, c.next === null ? -1 : Math.ceil(c.next)]),
        )) as number[];
        for (const [j, i] of group.at.entries()) {
          const result = Number(replies[j]);
          out[i] =
            result === -2
              ? { state: 'lost' }
              : result === -1
                ? { state: 'removed' }
                : { state: 'scheduled', at: result };
        }
      }),
    );
    return out;
  }
}
