/**
 * Sluice's distributed shape as a target: the services as separate processes, as they run
 * in production — the API, one rate limiter and two delivery workers
 * (`node services/<name>/src/main.ts`, each on a free port, default settings) — on a fresh
 * Postgres database `sluice_bench_<runId>` and a fresh Redis key prefix `bench-<runId>`
 * (BullMQ's keys under `bench-<runId>-bull`), driven over the API service exactly as the
 * single box is driven (sluice-client.ts).
 *
 * `sluice-cluster` (sluice-cluster.ts) is the same shape on the bench session's own Redis
 * Cluster (`SLUICE_REDIS_CLUSTER=true`, REDIS_URL a seed node) with the schedule, the pace
 * state and the delivery queue split into shards (`SLUICE_SCHEDULE_SHARDS`); only what
 * touches Redis differs (`Shape`).
 *
 * What is sampled: every service (each with the bench's probe preloaded), redis-server (on a
 * cluster each node, masters and replicas: redis-keys.ts `redisServerPids`), and
 * — when Postgres runs on this machine — the Postgres backends serving the run's database,
 * summed as one group (their pids come and go with the pools' connections; the server's
 * shared background processes, which serve everyone's databases, are left out). Tick lag
 * and tick counts come from the rate limiter's and the API's /metrics (the API runs the ticks
 * it wakes), deliveries from the workers'. Each service counts the Redis commands and
 * Postgres statements it sends (calls-probe.ts, for the budget per delivery: budget.ts).
 *
 * At stop: SIGTERM to every service (each drains), `DROP DATABASE … WITH (FORCE)`, the Redis
 * keys of both prefixes deleted (on every master of a cluster), and anything left reported
 * (`databaseLeftover`, `redisLeftoverKeys`). A failed start cleans up the same way.
 */

import { randomBytes } from 'node:crypto';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { generateKeyText } from '@sluice/core';
import { ensureDatabase } from '@sluice/store-postgres';
import pg from 'pg';
import { callsFile } from '../budget.ts';
import { errorMessage } from '../common.ts';
import { type ProcessGroup, parentOf } from '../procstat.ts';
import { connectAdmin, deleteKeys, redisServerPids } from './redis-keys.ts';
import { driveSluice } from './sluice-client.ts';
import type { SluiceMetrics } from './sluice-metrics.ts';
import { readMetrics, type SluiceProcess, startSluice, stopSluice } from './sluice-process.ts';
import { postgresStorage, redisUsedMemory } from './storage.ts';
import type { CreateTarget, Target, TargetSetup } from './target.ts';

/** The processes, by the name the records use: the API first (it serves the bench). */
const SERVICES = [
  { name: 'api', script: 'services/api/src/main.ts' },
  { name: 'rate-limiter', script: 'services/rate-limiter/src/main.ts' },
  { name: 'worker-1', script: 'services/delivery-worker/src/main.ts' },
  { name: 'worker-2', script: 'services/delivery-worker/src/main.ts' },
] as const;

/** The server URL with another database. */
function withDatabase(serverUrl: string, database: string): string {
  const url = new URL(serverUrl);
  url.pathname = `/${database}`;
  return url.href;
}

/** Runs `fn` on a connection to the server's `postgres` maintenance database. */
async function onServer<T>(serverUrl: string, fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: withDatabase(serverUrl, 'postgres') });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

/** The postmaster's pid when Postgres runs on this machine (a backend's parent), else null. */
async function postmasterPid(serverUrl: string): Promise<number | null> {
  return onServer(serverUrl, async (c) => {
    const backend = (await c.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]?.pid;
    return backend === undefined ? null : parentOf(backend); // while the backend still runs
  });
}

/**
 * The sum of the services' counters: the ticks of the rate limiter and of the API (it runs
 * the ticks it wakes, docs/adr/0013), the deliveries of the workers.
 */
function merged(services: (SluiceMetrics | null)[]): SluiceMetrics | null {
  const read = services.filter((m): m is SluiceMetrics => m !== null);
  if (read.length === 0) return null;
  const sum = (records: Record<string, number>[]): Record<string, number> => {
    const out: Record<string, number> = {};
    for (const r of records) for (const [k, n] of Object.entries(r)) out[k] = (out[k] ?? 0) + n;
    return out;
  };
  return {
    tickLagBuckets: sum(read.map((m) => m.tickLagBuckets)),
    tickLagCount: read.reduce((n, m) => n + m.tickLagCount, 0),
    tickLagSum: read.reduce((n, m) => n + m.tickLagSum, 0),
    ticks: sum(read.map((m) => m.ticks)),
    deliveries: sum(read.map((m) => m.deliveries)),
  };
}

/** Where the shape keeps its Redis state: the one server, or a cluster split into shards. */
export interface Shape {
  cluster: boolean;
  /** SLUICE_SCHEDULE_SHARDS (null: the services' default, one). */
  shards: number | null;
}

export const createTarget: CreateTarget = (setup) =>
  createDistributed(setup, { cluster: false, shards: null });

/** The distributed shape on the given Redis layout. */
export async function createDistributed(setup: TargetSetup, shape: Shape): Promise<Target> {
  const { runId, runDir, options } = setup;
  const database = `sluice_bench_${runId}`;
  const databaseUrl = withDatabase(options.postgresUrl, database);
  const prefix = `bench-${runId}`;
  const adminToken = randomBytes(24).toString('hex');
  const redis = connectAdmin(options, shape.cluster);
  const redisPids = await redisServerPids(redis).catch((err: unknown) => {
    redis.disconnect();
    throw err;
  });

  /** Drops the database and deletes the keys; answers what was done and what is left. */
  const cleanUp = async () => {
    const databaseLeftover = await onServer(options.postgresUrl, async (c) => {
      // Kept for a look afterwards (attempt times, claims, pg_stat_database) when asked.
      if (process.env.SLUICE_BENCH_KEEP_DATABASE !== '1')
        await c.query(`DROP DATABASE IF EXISTS ${pg.escapeIdentifier(database)} WITH (FORCE)`);
      return (await c.query('SELECT 1 FROM pg_database WHERE datname = $1', [database])).rowCount !== 0;
    });
    const deleted = (await deleteKeys(redis, `${prefix}:*`)) + (await deleteKeys(redis, `${prefix}-bull:*`));
    const leftover = await deleteKeys(redis, `*${runId}*`);
    redis.disconnect();
    return { databaseLeftover, redisKeysDeleted: deleted, redisLeftoverKeys: leftover };
  };

  const env = {
    DATABASE_URL: databaseUrl,
    REDIS_URL: shape.cluster
      ? (options.redisCluster?.url as string)
      : `redis://${options.redis.host}:${options.redis.port}/0`,
    ...(shape.cluster ? { SLUICE_REDIS_CLUSTER: 'true' } : {}),
    ...(shape.shards === null ? {} : { SLUICE_SCHEDULE_SHARDS: String(shape.shards) }),
    SLUICE_REDIS_PREFIX: prefix,
    // Every process of one installation seals and opens the signing secrets with one key.
    SLUICE_ENCRYPTION_KEY: generateKeyText(),
  };
  let processes: SluiceProcess[];
  let postmaster: number | null;
  try {
    await ensureDatabase(databaseUrl);
    postmaster = await postmasterPid(options.postgresUrl);
    // All at once: each migrates under an advisory lock, so the first one in does it.
    const started = await Promise.allSettled(
      SERVICES.map((s) =>
        startSluice({
          name: s.name,
          script: s.script,
          runDir,
          options,
          profileDir: join(runDir, 'profile', s.name),
          // Each counts its Redis commands and Postgres statements (calls-probe.ts, budget.ts).
          env: {
            ...env,
            ...(s.name === 'api' ? { SLUICE_ADMIN_TOKEN: adminToken } : {}),
            BENCH_CALLS_FILE: callsFile(runDir, s.name),
          },
        }),
      ),
    );
    processes = started.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
    const failed = started.find((r) => r.status === 'rejected');
    if (failed) {
      for (const p of processes) p.child.kill('SIGKILL');
      await Promise.all(processes.map((p) => p.exited));
      throw failed.reason;
    }
  } catch (err) {
    await cleanUp().catch(() => redis.disconnect());
    throw err;
  }
  const [apiProcess] = processes as [SluiceProcess, ...SluiceProcess[]];
  const driving = driveSluice(apiProcess.url, setup, adminToken);

  return {
    pids: () => ({
      ...Object.fromEntries(processes.map((p) => [p.name, p.child.pid as number])),
      ...redisPids,
    }),

    processGroups: (): Record<string, ProcessGroup> =>
      postmaster === null ? {} : { postgres: { parentPid: postmaster, cmdlineIncludes: ` ${database} ` } },

    setup: async () => ({
      ...(await driving.setup()),
      database,
      prefix,
      redis: {
        cluster: shape.cluster,
        shards: Number(options.sluiceEnv.SLUICE_SCHEDULE_SHARDS ?? shape.shards ?? 1),
        servers: Object.keys(redisPids),
      },
      ports: Object.fromEntries(processes.map((p) => [p.name, Number(new URL(p.url).port)])),
      // Without a visible postmaster (Postgres elsewhere) its backends' CPU is not measured.
      postgresSampled: postmaster !== null,
    }),
    submit: driving.submit,
    setLimit: driving.setLimit,
    snapshot: async () => {
      const each = await Promise.all(processes.map((p) => readMetrics(p.url)));
      const metrics = merged(each);
      const byProcess = Object.fromEntries(
        processes.flatMap((p, i) => {
          const m = each[i];
          return m ? [[p.name, m] as const] : [];
        }),
      );
      return metrics ? { ...metrics, byProcess } : null;
    },
    storage: async () => ({
      ...(await postgresStorage(databaseUrl)),
      redisUsedMemory: await redisUsedMemory(redis),
    }),

    async stop() {
      const apiAudit = await driving.audit().catch((err: unknown) => ({ error: errorMessage(err) }));
      await driving.close();
      const started = performance.now();
      const codes = await Promise.all(processes.map(stopSluice));
      const stopMs = Math.round(performance.now() - started);
      const cleaned = await cleanUp();
      const profiles: string[] = [];
      for (const p of processes) {
        const dir = join(runDir, 'profile', p.name);
        for (const f of await readdir(dir).catch(() => [] as string[])) profiles.push(join(dir, f));
      }
      return {
        exitCodes: Object.fromEntries(processes.map((p, i) => [p.name, codes[i] ?? null])),
        stopMs,
        ...driving.ingestStats(),
        apiAudit,
        database,
        prefix,
        ...cleaned,
        profiles,
      };
    },
  };
}
