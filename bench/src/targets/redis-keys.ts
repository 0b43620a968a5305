/**
 * What the targets that use Redis need of it besides their own work: a connection to the
 * session's Redis (its one server, or its private cluster for `sluice-cluster`), cleaning up a
 * run's keys without touching anyone else's (every such target keeps its keys under prefixes
 * that carry the run id and deletes them at stop), and the redis-server pids for sampling.
 */

import { deleteMatching, mastersOf, type RedisClient } from '@sluice/redis';
import { Cluster, Redis, type RedisOptions } from 'ioredis';
import type { TargetOptions } from './target.ts';

/**
 * The session's Redis: its cluster (`options.redisCluster`, when `cluster`), else its one
 * server; `node`: each connection's options.
 */
export function connectAdmin(options: TargetOptions, cluster = false, node: RedisOptions = {}): RedisClient {
  if (!cluster) return new Redis({ ...options.redis, ...node });
  if (options.redisCluster === undefined)
    throw new Error('sluice-cluster: the session started no Redis Cluster');
  return new Cluster(options.redisCluster.seeds, { redisOptions: node });
}

/** Every key matching `pattern` deleted, on every master of a cluster; how many. */
export const deleteKeys = deleteMatching;

/** The pid of the redis-server behind a connection (INFO server), for /proc sampling. */
export async function redisServerPid(redis: Redis): Promise<number> {
  return Number(/process_id:(\d+)/.exec(await redis.info('server'))?.[1]);
}

/** One server: `redis-server`; a cluster: `redis-master-<i>` and `redis-replica-<i>` (by port). */
const NODE = /^redis-(master|replica)-\d+$/;

/**
 * A cluster's replicas, as its nodes list them (`CLUSTER NODES`: `<id> <ip:port@bus> <flags> …`):
 * ioredis connects to them only when it reads from them (`scaleReads`), so `nodes('slave')`
 * is empty. Each answer is a connection the caller disconnects.
 */
export async function replicasOf(redis: Cluster): Promise<Redis[]> {
  const text = String(await redis.call('CLUSTER', 'NODES'));
  return text
    .trim()
    .split('\n')
    .map((line) => line.split(' '))
    .filter(([, , flags = '']) => flags.split(',').includes('slave'))
    .map(([, address = '']) => {
      const [host = '127.0.0.1', port] = (address.split('@')[0] ?? '').split(/:(?=\d+$)/);
      return new Redis({ host, port: Number(port), lazyConnect: true, maxRetriesPerRequest: 1 });
    });
}

/** Every redis-server of the session's Redis by the name the records use (above). */
export async function redisServerPids(redis: RedisClient): Promise<Record<string, number>> {
  if (!(redis instanceof Cluster)) return { 'redis-server': await redisServerPid(redis) };
  await redis.ping(); // its slots read: it knows its masters
  const byPort = (a: Redis, b: Redis) => Number(a.options.port) - Number(b.options.port);
  const replicas = await replicasOf(redis);
  const out: Record<string, number> = {};
  try {
    for (const [i, node] of mastersOf(redis).sort(byPort).entries())
      out[`redis-master-${i + 1}`] = await redisServerPid(node);
    for (const [i, node] of replicas.sort(byPort).entries())
      out[`redis-replica-${i + 1}`] = await redisServerPid(node);
  } finally {
    for (const replica of replicas) replica.disconnect();
  }
  return out;
}

interface Cost {
  cpuS: number | null;
  cpuPct: number | null;
  maxCpuPct: number | null;
  peakRssMb: number | null;
  hwmMb: number | null;
}

/**
 * A cluster's nodes (kept, each under its own name) folded into `redis-server` (every node:
 * what Redis costs the run, as the one server's entry says on a single Redis), `redis-masters`
 * and `redis-replicas` (what replication costs): CPU and memory summed (a sum of the nodes'
 * peaks, not one peak; the busiest second likewise, an upper bound). Costs without nodes are
 * answered unchanged.
 */
export function foldRedisNodes<C extends Cost>(cost: Record<string, C>): Record<string, C | Cost> {
  const nodes = Object.entries(cost).filter(([name]) => NODE.test(name));
  if (nodes.length === 0) return cost;
  const add = (a: number | null, b: number | null): number | null =>
    a === null || b === null ? null : a + b;
  const sum = (prefix: string): Cost =>
    nodes
      .filter(([name]) => name.startsWith(prefix))
      .reduce<Cost>(
        (acc, [, c]) => ({
          cpuS: add(acc.cpuS, c.cpuS),
          cpuPct: add(acc.cpuPct, c.cpuPct),
          maxCpuPct: add(acc.maxCpuPct, c.maxCpuPct),
          peakRssMb: add(acc.peakRssMb, c.peakRssMb),
          hwmMb: add(acc.hwmMb, c.hwmMb),
        }),
        { cpuS: 0, cpuPct: 0, maxCpuPct: 0, peakRssMb: 0, hwmMb: 0 },
      );
  return {
    ...cost,
    'redis-server': sum('redis-'),
    'redis-masters': sum('redis-master-'),
    'redis-replicas': sum('redis-replica-'),
  };
}
