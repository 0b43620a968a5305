/**
 * Where Sluice's Redis is and how to connect to it: one server (`REDIS_URL`), or a Redis
 * Cluster of which `REDIS_URL` is a seed node (`SLUICE_REDIS_CLUSTER=true`; ioredis `Cluster`
 * finds the others from it). Every other module takes a `RedisClient` — either — and keeps
 * every script's keys in one slot (keys.ts), so the same code runs on both.
 */

import type { ConnectionOptions } from 'bullmq';
import { Cluster, type ClusterOptions, Redis, type RedisOptions } from 'ioredis';
import type { RedisClient } from './client.ts';
import { BATCH_SCRIPTS } from './scripts.ts';

export type { RedisClient } from './client.ts';

export interface RedisTarget {
  /** `redis://` or `rediss://` (TLS): the server, or a seed node of the cluster. */
  url: string;
  cluster: boolean;
}

/** The options of one node's connection a URL carries (credentials, TLS, database). */
function urlOptions(redisUrl: string): {
  host: string;
  port: number;
  db: number;
  password?: string;
  username?: string;
  tls?: object;
} {
  const url = new URL(redisUrl);
  return {
    host: url.hostname,
    port: Number(url.port || 6379),
    db: Number(url.pathname.slice(1) || 0),
    ...(url.password ? { password: decodeURIComponent(url.password) } : {}),
    ...(url.username ? { username: decodeURIComponent(url.username) } : {}),
    ...(url.protocol === 'rediss:' ? { tls: {} } : {}),
  };
}

/**
 * ioredis' cluster options for ours: a command that meets a failover (the node it was sent to
 * is gone, or the whole cluster answers CLUSTERDOWN while a replica is promoted) is retried
 * every 300 ms instead of failing, up to `maxRedirections` (16) times — ~5 s, past a failover
 * at a `cluster-node-timeout` of a few seconds (ioredis' 100 ms defaults give up after 1.6 s,
 * while a replica is still being promoted); a longer outage fails the command, as a lost
 * connection does. After a MOVED, the next try waits 100 ms so as not to bounce between
 * nodes mid-promotion. The slot map is also re-read every `slotsRefreshInterval` (ioredis'
 * 5 s for our own clients): the only re-read for the subscriber, which sends no keyed command,
 * and for a client whose master's host vanished without closing the connection (a command
 * that times out does not re-read it). A cluster has no databases: the URL's `/db` is dropped.
 */
function clusterOptions(target: RedisTarget, node: RedisOptions, options: ClusterOptions): ClusterOptions {
  const { host: _host, port: _port, db: _db, ...auth } = urlOptions(target.url);
  return {
    retryDelayOnFailover: 300,
    retryDelayOnClusterDown: 300,
    retryDelayOnMoved: 100,
    slotsRefreshInterval: 5_000,
    ...options,
    redisOptions: { ...auth, ...node },
  };
}

const seed = (target: RedisTarget) => {
  const { host, port } = urlOptions(target.url);
  return [{ host, port }];
};

/**
 * A command connection. `options`: a node's connection options (the cluster's
 * `redisOptions`, except `enableOfflineQueue`, `retryStrategy` (the cluster's
 * `clusterRetryStrategy`), auto-pipelining's and `lazyConnect`, which are the cluster's).
 */
export function connectRedis(target: RedisTarget, options: RedisOptions = {}): RedisClient {
  if (!target.cluster) return new Redis(target.url, options);
  const {
    enableOfflineQueue,
    retryStrategy,
    enableAutoPipelining,
    autoPipeliningIgnoredCommands,
    lazyConnect,
    ...node
  } = options;
  return new Cluster(
    seed(target),
    clusterOptions(target, node, {
      ...(enableOfflineQueue === undefined ? {} : { enableOfflineQueue }),
      ...(retryStrategy ? { clusterRetryStrategy: (times) => retryStrategy(times) } : {}),
      ...(enableAutoPipelining === undefined ? {} : { enableAutoPipelining }),
      // Never in a cluster's auto-pipeline: BATCH_SCRIPTS says why.
      autoPipeliningIgnoredCommands: [...(autoPipeliningIgnoredCommands ?? []), ...BATCH_SCRIPTS],
      ...(lazyConnect === undefined ? {} : { lazyConnect }),
    }),
  );
}

/**
 * How often BullMQ's cluster clients re-read the slot map: 15 s, not ioredis' 5 (which our
 * own clients keep, above). Each re-read opens a connection and rebuilds a map of the 16,384
 * slots, and a delivery worker holds one such client per shard (BullMQ duplicates it for each
 * worker's blocking connection), so the re-reads cost a worker in proportion to its shards,
 * busy or idle (docs/performance.md, "On a Redis Cluster"). The price is on a master whose
 * host vanished without closing its connections: a blocking pop or a publish waiting on it
 * moves at the next re-read, up to 15 s after the promotion rather than 5 (the watch in
 * delivery-worker.ts replaces a worker that takes no job meanwhile). A master lost with its process closes them, and the failover re-reads at once.
 */
const BULL_SLOTS_REFRESH_MS = 15_000;

/**
 * BullMQ's connection: options for one server (BullMQ opens its own connections from them; a
 * `rediss://` URL means TLS, as ioredis reads it, carried here because BullMQ takes options,
 * not a URL); on a cluster, a `Cluster` of BullMQ's own, which BullMQ uses as given and
 * duplicates for a worker's blocking connection (the caller closes it after the queues).
 * Its commands wait for a reconnection (`maxRetriesPerRequest: null`), as BullMQ requires.
 */
export function bullConnection(target: RedisTarget): BullConnection {
  if (!target.cluster) return urlOptions(target.url);
  return new Cluster(
    seed(target),
    clusterOptions(target, { maxRetriesPerRequest: null }, { slotsRefreshInterval: BULL_SLOTS_REFRESH_MS }),
  );
}

export type BullConnection = ConnectionOptions;

/** Closes what `bullConnection` opened (options open nothing: BullMQ closes its own). */
export function closeBullConnection(connection: BullConnection): void {
  if (connection instanceof Cluster) connection.disconnect();
}

/** The servers that hold keys: the cluster's masters, or the one server. */
export function mastersOf(redis: RedisClient): Redis[] {
  return redis instanceof Cluster ? redis.nodes('master') : [redis];
}

/**
 * Deletes every key matching `pattern` on every master (SCAN, then one UNLINK per key: on a
 * cluster node, keys of different slots may not share a command); answers how many.
 */
export async function deleteMatching(redis: RedisClient, pattern: string): Promise<number> {
  if (redis instanceof Cluster) await redis.ping(); // its slots read: mastersOf knows the nodes
  let n = 0;
  for (const node of mastersOf(redis)) {
    let cursor = '0';
    do {
      const [next, keys] = await node.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
      cursor = next;
      if (keys.length === 0) continue;
      const pipeline = node.pipeline();
      for (const key of keys) pipeline.unlink(key);
      for (const [err, deleted] of (await pipeline.exec()) ?? []) if (!err) n += Number(deleted);
    } while (cursor !== '0');
  }
  return n;
}
