/**
 * What a run asks of Redis and Postgres, for the budget per delivery (BENCHMARKS.md "Budget
 * per delivery", docs/performance.md): taken at two marks of the run (run.ts) — when the
 * first event is handed over, and 1.5 s after the last first 2xx (the last outcomes written,
 * and Postgres's statistics flushed: a backend reports them at most once a second) — and the
 * difference kept in the run's record as `budget`:
 *
 * - `processes`: by process, the Redis commands and the Postgres statements it sent
 *   (calls-probe.ts, in the process; a script call under its script's name);
 * - `redisServer`: redis-server's `INFO commandstats` calls by command (the commands a
 *   script runs included; the runner's own `INFO` left out). The bench starts a private
 *   redis-server for its session (@sluice/testing, `redisPrivate: true`), so these are the
 *   run's alone; on a shared server (REDIS_HOST/REDIS_PORT given) anyone else's are in them.
 *   On a cluster (`sluice-cluster`), summed over its masters (`redisServer`: the commands the
 *   run asked for, wherever they ran), and apart over its replicas (`redisReplicas`: what they
 *   replay of the masters' writes, with their own `replconf`s);
 * - `postgresServer`: the run's database's `pg_stat_database` counters (transactions,
 *   rows). Statements by text come from the processes: pg_stat_statements needs
 *   `shared_preload_libraries`, which a shared server need not have (this machine's has not).
 */

import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { mastersOf, type RedisClient } from '@sluice/redis';
import { Cluster, type Redis } from 'ioredis';
import pg from 'pg';
import { sleep } from './common.ts';
import { connectAdmin, replicasOf } from './targets/redis-keys.ts';
import type { TargetName, TargetOptions } from './targets/target.ts';

export type Counts = Record<string, number>;

/** The processes that count their calls (calls-probe.ts), by target. */
export const COUNTED: Record<TargetName, string[]> = {
  sluice: [],
  'sluice-distributed': ['api', 'rate-limiter', 'worker-1', 'worker-2'],
  'sluice-cluster': ['api', 'rate-limiter', 'worker-1', 'worker-2'],
  'bullmq-rlf': ['bullmq-rlf'],
  ceiling: [],
};

/** Where a counting process appends its counts (calls-probe.ts reads $BENCH_CALLS_FILE). */
export const callsFile = (runDir: string, name: string): string => join(runDir, `${name}-calls.ndjson`);

const PG_COUNTERS = [
  'xact_commit',
  'xact_rollback',
  'tup_returned',
  'tup_fetched',
  'tup_inserted',
  'tup_updated',
  'tup_deleted',
] as const;

export interface Budget {
  window: string;
  redisPrivate: boolean;
  processes: Record<string, { redis: Counts; pg: Counts }>;
  redisServer: Counts | null;
  /** A cluster's replicas (`redisServer` is then its masters'); absent on one server. */
  redisReplicas?: Counts | null;
  postgresServer: Counts | null;
}

/** b − a, key by key (keys only in b count from 0); zeros left out. */
export function diff(a: Counts, b: Counts): Counts {
  const out: Counts = {};
  for (const [k, n] of Object.entries(b)) {
    const d = n - (a[k] ?? 0);
    if (d !== 0) out[k] = d;
  }
  return out;
}

/** `INFO commandstats` → calls by command (`cmdstat_client|setname:calls=1,…` → `client|setname`). */
export function parseCommandStats(info: string): Counts {
  const out: Counts = {};
  for (const m of info.matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm)) out[m[1] as string] = Number(m[2]);
  return out;
}

/** `INFO commandstats` summed over servers, the runner's own `INFO` left out. */
async function commandStats(servers: Redis[]): Promise<Counts> {
  const out: Counts = {};
  for (const server of servers) {
    for (const [command, n] of Object.entries(parseCommandStats(await server.info('commandstats'))))
      out[command] = (out[command] ?? 0) + n;
  }
  delete out.info;
  return out;
}

interface CallsLine {
  redis: Counts;
  pg: Counts;
}

interface ProbeSetup {
  names: string[];
  pids: Record<string, number>;
  runDir: string;
  options: TargetOptions;
  database: string | null;
  pgClient: pg.Client | null;
  /** The target runs on the session's Redis Cluster. */
  cluster: boolean;
}

export class BudgetProbe {
  private readonly s: ProbeSetup;
  private readonly redis: RedisClient;
  private readonly redisMarks: Counts[] = [];
  private readonly replicaMarks: Counts[] = [];
  private readonly pgMarks: Counts[] = [];

  private constructor(s: ProbeSetup) {
    this.s = s;
    this.redis = connectAdmin(s.options, s.cluster, { maxRetriesPerRequest: 1 });
  }

  /** For a target that counts (COUNTED), else null; `database` is the run's Postgres database, if any. */
  static async open(
    target: TargetName,
    pids: Record<string, number>,
    runDir: string,
    options: TargetOptions,
    database: string | null,
  ): Promise<BudgetProbe | null> {
    const names = COUNTED[target].filter((n) => pids[n] !== undefined);
    if (names.length === 0) return null;
    let client: pg.Client | null = null;
    if (database !== null) {
      const url = new URL(options.postgresUrl);
      url.pathname = '/postgres';
      client = new pg.Client({ connectionString: url.href });
      await client.connect();
    }
    const cluster = target === 'sluice-cluster';
    return new BudgetProbe({ names, pids, runDir, options, database, pgClient: client, cluster });
  }

  /** Every counting process writes its counts; the servers' counters are read. */
  async mark(): Promise<void> {
    for (const name of this.s.names) {
      try {
        process.kill(this.s.pids[name] as number, 'SIGUSR2');
      } catch {
        // gone: its counts end at its last line
      }
    }
    if (this.redis instanceof Cluster) {
      await this.redis.ping(); // its slots read: it knows its nodes
      this.redisMarks.push(await commandStats(mastersOf(this.redis)));
      const replicas = await replicasOf(this.redis);
      try {
        this.replicaMarks.push(await commandStats(replicas));
      } finally {
        for (const replica of replicas) replica.disconnect();
      }
    } else {
      this.redisMarks.push(await commandStats([this.redis]));
    }
    if (this.s.pgClient && this.s.database) {
      const row = (
        await this.s.pgClient.query<Record<string, string>>(
          `SELECT ${PG_COUNTERS.join(', ')} FROM pg_stat_database WHERE datname = $1`,
          [this.s.database],
        )
      ).rows[0];
      this.pgMarks.push(Object.fromEntries(PG_COUNTERS.map((c) => [c, Number(row?.[c] ?? 0)])));
    }
  }

  /** The differences between the two marks; closes the connections. */
  async finish(): Promise<Budget> {
    await sleep(200); // the last lines written
    const processes: Budget['processes'] = {};
    for (const name of this.s.names) {
      const file = callsFile(this.s.runDir, name);
      const lines = existsSync(file)
        ? readFileSync(file, 'utf8')
            .split('\n')
            .filter(Boolean)
            .map((l) => JSON.parse(l) as CallsLine)
        : [];
      const [a, b] = lines;
      if (a && b) processes[name] = { redis: diff(a.redis, b.redis), pg: diff(a.pg, b.pg) };
    }
    const pair = <T>(marks: T[]): [T, T] | null =>
      marks.length >= 2 ? [marks[0] as T, marks[1] as T] : null;
    const redisPair = pair(this.redisMarks);
    const replicaPair = pair(this.replicaMarks);
    const pgPair = pair(this.pgMarks);
    await this.close();
    return {
      window: 'first hand-over → 1.5 s after the last first 2xx',
      redisPrivate: this.s.options.redisPrivate === true,
      processes,
      redisServer: redisPair ? diff(...redisPair) : null,
      ...(this.s.cluster ? { redisReplicas: replicaPair ? diff(...replicaPair) : null } : {}),
      postgresServer: pgPair ? diff(...pgPair) : null,
    };
  }

  async close(): Promise<void> {
    this.redis.disconnect();
    await this.s.pgClient?.end().catch(() => {});
  }
}
