/**
 * Every Redis key of ours, in one place (docs/adr/0002-distributed-shape.md).
 *
 * A destination belongs to one schedule shard, `hash(id) mod shards`; every key a script
 * touches for it carries that shard's hash tag `{s<n>}`, so each script's keys share one
 * Redis Cluster slot. With more than one shard the tag is `{s<n>.<k>}`, `k` the first whose
 * slot lies mid-way in the n-th of `shards` equal ranges of the 16,384 slots: the shards are spread
 * evenly over the slot space, so a cluster whose masters hold equal ranges of slots (what
 * `redis-cli --cluster create` and `rebalance` make) holds equal numbers of shards when the
 * shard count is a multiple of the masters'. (CRC16 of `s0`, `s1`, … is not even: plain
 * tags leave some masters with none and others with two.) BullMQ's keys are its own (its own prefix), never in our scripts.
 * The delivery queue is one BullMQ queue per shard, its prefix tagged with the shard's tag
 * too (`<prefix>-bull:{s<n>}`): a destination's ticks, pace and jobs live on one node, so
 * each node a cluster adds takes its shards' whole work. One shard on one server keeps the
 * untagged `<prefix>-bull`.
 *
 *   <prefix>:{s<n>}:schedule            ZSET destination → due time of its next tick
 *   <prefix>:{s<n>}:leases              ZSET destination → lease expiry of a running tick
 *   <prefix>:{s<n>}:woken               ZSET destination → earliest wake during its tick
 *   <prefix>:{s<n>}:built               STRING the shard's state was built from the store
 *                                        (state-built.ts): no request of it starts without it
 *   <prefix>:{s<n>}:d:<id>:queued       ZSET delivery → publish time (request not started)
 *   <prefix>:{s<n>}:d:<id>:inflight     ZSET attempt → its lease's expiry (not finished; renewed)
 *   <prefix>:{s<n>}:d:<id>:sends        ZSET attempt → latest moment it can have arrived
 *   <prefix>:{s<n>}:d:<id>:pace         HASH the token bucket (tat, n, T), adaptive pacing
 *                                        (lim, per, E, cut, calm, hold, ewma, base) and the fair
 *                                        bound's latency, last answer and busy-since (lat, fin, bsy, ADR 0014);
 *                                        expires a day after its last write (docs/adr/0008)
 *   <prefix>:{s<n>}:d:<id>:cap          HASH the window's cap as the API last committed it (c)
 *                                        and the copy's version (v); for a few minutes after
 *                                        each change (docs/adr/0012-publish-ahead.md)
 *   <prefix>:t:<tenant id>:rate         STRING a tenant's events-a-second bucket (GCRA tat, ms;
 *                                        takeRate-1.lua); expires once the bucket is full
 *                                        again. A one-key script: no shard tag needed
 *   <prefix>:oauth:<key>:token          STRING an OAuth2 access token, sealed with the keyring;
 *                                        expires a margin before the token does
 *   <prefix>:oauth:<key>:lock           STRING the worker whose token request is in flight (SET NX PX)
 *   <prefix>:oauth:<key>:failed         STRING the last failed token request's error, for a few
 *                                        seconds (oauth-token-cache.ts); one-key commands only
 *   <prefix>:tenants-held               HASH delivery worker → when it last wrote and the tenants
 *                                        whose share of its slots slow requests hold
 *                                        (tenant-holds.ts); one-key commands only
 *   <prefix>:epoch                      STRING 'ready' once the state was built from the store
 *                                        (every shard's `built` with it); no tick runs without it
 *   <prefix>:rebuild                    STRING the replica that rebuilds the state (SET NX PX)
 *   <prefix>:layout                     STRING the number of shards the keys were made for
 *                                        (SLUICE_SCHEDULE_SHARDS): a process started with
 *                                        another number refuses to run (docs/scaling.md)
 *   <prefix>:kick                       channel: a tick moved to the head of a schedule
 *   <prefix>:changes                    channel: a destination changed (id)
 */

import { createHash } from 'node:crypto';
import calculateSlot from 'cluster-key-slot';
import { LRUCache } from 'lru-cache';

const SLOTS = 16_384;
/** How many destinations' shards a `Keys` remembers (~1 MB). */
const SHARDS_REMEMBERED = 10_000;

/**
 * Shard n's tag: the first `s<n>.<k>` whose slot lies in the middle half of the shard's range
 * of slots — away from its edges, so that a master's range that starts or ends a slot or two
 * off an even split still holds it (one shard: `s0`, as always).
 */
function shardTag(n: number, shards: number): string {
  if (shards === 1) return 's0';
  const width = SLOTS / shards;
  const from = n * width + width / 4;
  const to = (n + 1) * width - width / 4;
  for (let k = 0; ; k++) {
    const tag = `s${n}.${k}`;
    const slot = calculateSlot(tag);
    if (slot >= from && slot < to) return tag;
  }
}

export class Keys {
  readonly prefix: string;
  readonly shards: number;
  /** The delivery queues' prefixes carry the shard's tag (more than one shard, or a cluster). */
  private readonly taggedQueues: boolean;
  /** Shard n's hash tag, without its braces. */
  private readonly tags: string[];
  /**
   * Destination -> shard, for the most recently asked: a delivery asks for five or six of its
   * keys, and hashing its id (SHA-1) for each was a visible share of a worker's time on a
   * cluster (docs/performance.md, "On a Redis Cluster"). lru-cache (isaacs), as the
   * destination cache: a bounded Map. None with one shard, which asks nothing (lru-cache
   * allocates its whole table up front).
   */
  private readonly shardsOf: LRUCache<string, number> | undefined;

  constructor(prefix: string, shards = 1, options: { cluster?: boolean } = {}) {
    if (!/^[A-Za-z0-9_.:-]+$/.test(prefix)) throw new Error(`bad Redis key prefix: ${prefix}`);
    if (!Number.isInteger(shards) || shards < 1)
      throw new Error(`shards must be a positive integer: ${shards}`);
    this.prefix = prefix;
    this.shards = shards;
    this.taggedQueues = shards > 1 || options.cluster === true;
    this.tags = Array.from({ length: shards }, (_, n) => shardTag(n, shards));
    this.shardsOf = shards === 1 ? undefined : new LRUCache({ max: SHARDS_REMEMBERED });
  }

  /** Shard n's hash tag, braces included: `{s0}`, or `{s<n>.<k>}` with several shards. */
  hashTag(shard: number): string {
    return `{${this.tags[shard]}}`;
  }

  /** Every shard's number, 0 … shards − 1. */
  allShards(): number[] {
    return Array.from({ length: this.shards }, (_, shard) => shard);
  }

  /** The BullMQ prefix of a shard's delivery queue. */
  bullPrefix(shard: number): string {
    return this.taggedQueues ? `${this.prefix}-bull:${this.hashTag(shard)}` : `${this.prefix}-bull`;
  }

  shardOf(destinationId: string): number {
    if (this.shardsOf === undefined) return 0;
    let shard = this.shardsOf.get(destinationId);
    if (shard === undefined) {
      shard = createHash('sha1').update(destinationId).digest().readUInt32BE(0) % this.shards;
      this.shardsOf.set(destinationId, shard);
    }
    return shard;
  }

  private tag(shard: number): string {
    return `${this.prefix}:${this.hashTag(shard)}`;
  }

  schedule(shard: number): string {
    return `${this.tag(shard)}:schedule`;
  }

  leases(shard: number): string {
    return `${this.tag(shard)}:leases`;
  }

  woken(shard: number): string {
    return `${this.tag(shard)}:woken`;
  }

  /** Set when the shard's state was built from the store (state-built.ts). */
  built(shard: number): string {
    return `${this.tag(shard)}:built`;
  }

  /** The three keys of a destination's shard that the schedule scripts take. */
  scheduleKeys(destinationId: string): [string, string, string] {
    const shard = this.shardOf(destinationId);
    return [this.schedule(shard), this.leases(shard), this.woken(shard)];
  }

  queued(destinationId: string): string {
    return `${this.tag(this.shardOf(destinationId))}:d:${destinationId}:queued`;
  }

  inflight(destinationId: string): string {
    return `${this.tag(this.shardOf(destinationId))}:d:${destinationId}:inflight`;
  }

  sends(destinationId: string): string {
    return `${this.tag(this.shardOf(destinationId))}:d:${destinationId}:sends`;
  }

  pace(destinationId: string): string {
    return `${this.tag(this.shardOf(destinationId))}:d:${destinationId}:pace`;
  }

  cap(destinationId: string): string {
    return `${this.tag(this.shardOf(destinationId))}:d:${destinationId}:cap`;
  }

  /** Each delivery worker's tenants held by slow requests (tenant-holds.ts). */
  tenantsHeld(): string {
    return `${this.prefix}:tenants-held`;
  }

  /**
   * An OAuth2 credential's access token (`:token`, sealed), the lock of its one request in
   * flight (`:lock`) and its last failure (`:failed`), by the credential's key
   * (engine oauth-tokens.ts: the destination and a digest of the credential).
   */
  oauth(key: string, part: 'token' | 'lock' | 'failed'): string {
    return `${this.prefix}:oauth:${key}:${part}`;
  }

  /** A tenant's ingest-rate bucket (the events-a-second quota). */
  tenantRate(tenantId: string): string {
    return `${this.prefix}:t:${tenantId}:rate`;
  }

  epoch(): string {
    return `${this.prefix}:epoch`;
  }

  /** Held by the replica that rebuilds the state from the store. */
  rebuild(): string {
    return `${this.prefix}:rebuild`;
  }

  layout(): string {
    return `${this.prefix}:layout`;
  }

  kickChannel(): string {
    return `${this.prefix}:kick`;
  }

  changesChannel(): string {
    return `${this.prefix}:changes`;
  }

  /** A pattern matching every key of ours (for clean-up in tests). */
  pattern(): string {
    return `${this.prefix}:*`;
  }
}
