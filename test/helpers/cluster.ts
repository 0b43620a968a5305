/**
 * The distributed shape as separate processes, as it runs in production: one API, N rate
 * limiters and M delivery workers (`node services/<name>/src/main.ts`), on a fresh database
 * and Redis key prefix (`childState`). Every tick a limiter or the API (the ticks it wakes,
 * docs/adr/0013) runs is collected from its debug log, so a test can check that no
 * destination's tick ever ran in two processes at once.
 */

import { bullConnection, closeBullConnection, connectRedis, Keys, type RedisClient } from '@sluice/redis';
import { Queue } from 'bullmq';
import { assertNoLeaks } from './leaks.ts';
import { type Receiver, startReceiver } from './receiver.ts';
import { childState } from './shape.ts';
import {
  type ChildProcessHandle,
  type Client,
  client,
  freePort,
  randomToken,
  spawnService,
} from './sluice.ts';

export interface TickRun {
  /** The rate limiter that ran it, in start order; -1: the API. */
  limiter: number;
  destinationId: string;
  due: number;
  startedAt: number;
  finishedAt: number;
}

export interface Cluster extends Client {
  url: string;
  adminToken: string;
  apiProcess: ChildProcessHandle;
  limiters: ChildProcessHandle[];
  workers: ChildProcessHandle[];
  ticks: TickRun[];
  /** A command connection to the cluster's Redis (one server, or a Redis Cluster). */
  redis: RedisClient;
  prefix: string;
  /** The key layout the services use (their shards). */
  keys: Keys;
  /** The BullMQ delivery queue of each shard, as the services name them. */
  queues: Queue[];
  /** Jobs in these states over every shard's queue. */
  jobCounts(...states: ('wait' | 'prioritized' | 'delayed' | 'active')[]): Promise<number>;
  /** Destinations scheduled or leased over every shard. */
  scheduled(): Promise<number>;
  addLimiter(): Promise<ChildProcessHandle>;
  addWorker(): Promise<ChildProcessHandle>;
  close(): Promise<void>;
}

export async function startCluster(
  opts: { limiters: number; workers: number; env?: Record<string, string> } = { limiters: 1, workers: 1 },
): Promise<Cluster> {
  const state = await childState();
  const adminToken = randomToken();
  const env: Record<string, string> = {
    ...state.env,
    SLUICE_ADMIN_TOKEN: adminToken,
    SLUICE_LOG_LEVEL: 'info',
    SLUICE_SWEEP_INTERVAL_MS: '1000',
    // A few connections a process: a cluster is up to eight of them, and the suite runs files
    // side by side on one Postgres (max_connections 100 by default).
    SLUICE_PG_POOL_SIZE: '4',
    SLUICE_PG_POOL_MIN: '1',
    ...opts.env,
  };
  const prefix = state.env.SLUICE_REDIS_PREFIX as string;
  const ticks: TickRun[] = [];
  const started: ChildProcessHandle[] = [];
  const limiters: ChildProcessHandle[] = [];
  const workers: ChildProcessHandle[] = [];
  let limiterCount = 0;
  /** Collects the ticks of one process from its debug log. */
  const tickLog = (n: number) => (line: string) => {
    if (!line.includes('"msg":"tick"')) return;
    const t = JSON.parse(line) as Omit<TickRun, 'limiter'>;
    ticks.push({
      limiter: n,
      destinationId: t.destinationId,
      due: t.due,
      startedAt: t.startedAt,
      finishedAt: t.finishedAt,
    });
  };
  const addLimiter = async () => {
    const child = await spawnService(
      'services/rate-limiter/src/main.ts',
      { ...env, PORT: '0', SLUICE_LOG_LEVEL: 'debug' },
      tickLog(limiterCount++),
    );
    limiters.push(child);
    started.push(child);
    return child;
  };
  const addWorker = async () => {
    const child = await spawnService('services/delivery-worker/src/main.ts', { ...env, PORT: '0' });
    workers.push(child);
    started.push(child);
    return child;
  };
  const port = await freePort();
  let api: ChildProcessHandle;
  try {
    api = await spawnService(
      'services/api/src/main.ts',
      { ...env, PORT: String(port), SLUICE_LOG_LEVEL: 'debug' },
      tickLog(-1),
    );
    started.push(api);
    // Every start settles before any is judged: one that fails must not leave the others
    // starting after the clean-up below, alive and unknown to any close.
    const starts = await Promise.allSettled([
      ...Array.from({ length: opts.limiters }, addLimiter),
      ...Array.from({ length: opts.workers }, addWorker),
    ]);
    const failed = starts.find((s) => s.status === 'rejected');
    if (failed) throw failed.reason;
  } catch (err) {
    await Promise.all(started.map((c) => c.kill9()));
    await state.close();
    throw err;
  }
  const url = `http://127.0.0.1:${port}`;
  const c = client(url);
  const target = { url: env.REDIS_URL as string, cluster: env.SLUICE_REDIS_CLUSTER === 'true' };
  const redis = connectRedis(target);
  const keys = new Keys(prefix, Number(env.SLUICE_SCHEDULE_SHARDS ?? 1), { cluster: target.cluster });
  const bull = bullConnection(target);
  const queues = keys
    .allShards()
    .map((shard) => new Queue('deliveries', { connection: bull, prefix: keys.bullPrefix(shard) }));
  const jobCounts = async (...states: ('wait' | 'prioritized' | 'delayed' | 'active')[]) => {
    const counts = await Promise.all(queues.map((q) => q.getJobCounts(...states)));
    return counts.flatMap((c) => Object.values(c)).reduce((a, b) => a + b, 0);
  };
  const scheduled = async () => {
    let n = 0;
    for (const shard of keys.allShards())
      n += (await redis.zcard(keys.schedule(shard))) + (await redis.zcard(keys.leases(shard)));
    return n;
  };
  return {
    ...c,
    url,
    adminToken,
    apiProcess: api,
    limiters,
    workers,
    ticks,
    redis,
    prefix,
    keys,
    queues,
    jobCounts,
    scheduled,
    addLimiter,
    addWorker,
    close: async () => {
      await c.close();
      await Promise.all(started.map((child) => child.stop()));
      await Promise.all(queues.map((q) => q.close()));
      closeBullConnection(bull);
      redis.disconnect();
      await state.close();
    },
  };
}

/** Pairs of one destination's ticks that overlapped in time (ran on two replicas at once). */
export function overlappingTicks(ticks: readonly TickRun[]): [TickRun, TickRun][] {
  const byDestination = new Map<string, TickRun[]>();
  for (const t of ticks) {
    const list = byDestination.get(t.destinationId) ?? [];
    list.push(t);
    byDestination.set(t.destinationId, list);
  }
  const out: [TickRun, TickRun][] = [];
  for (const list of byDestination.values()) {
    list.sort((a, b) => a.startedAt - b.startedAt);
    for (let i = 1; i < list.length; i++) {
      const prev = list[i - 1] as TickRun;
      const next = list[i] as TickRun;
      if (next.startedAt < prev.finishedAt) out.push([prev, next]);
    }
  }
  return out;
}

/** A cluster and a receiver for `body`, closed after it; a failure carries the processes' last log lines. */
export async function withCluster(
  opts: Parameters<typeof startCluster>[0],
  body: (c: Cluster, rcv: Receiver) => Promise<void>,
): Promise<void> {
  const rcv = await startReceiver();
  let c: Cluster | undefined;
  let failure: Error | undefined;
  try {
    c = await startCluster(opts);
    await body(c, rcv);
  } catch (err) {
    failure = err as Error;
    if (c) {
      const tail = (name: string, lines: string[]) => `--- ${name}\n${lines.slice(-15).join('\n')}`;
      const logs = [
        tail('api', c.apiProcess.logs),
        ...c.limiters.map((l, i) => tail(`limiter ${i}`, l.logs)),
      ];
      (err as Error).message += `\n${logs.join('\n')}`;
    }
    throw err;
  } finally {
    await c?.close();
    await rcv.close();
    // A leak found after a failure is told with it, not instead of it.
    await assertNoLeaks().catch((leak: unknown) => {
      if (failure === undefined) throw leak;
      failure.message += `\n(and after it: ${(leak as Error).message})`;
    });
  }
}
