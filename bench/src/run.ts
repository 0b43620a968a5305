/**
 * One run: one scenario on one target, from scratch.
 *
 *   1. a fresh receiver (its own process, nice -10 when permitted);
 *   2. a driver process for the target (driver.ts): it starts the target and creates the
 *      workload's destinations, then answers the pids to sample;
 *   3. /proc sampling of every process starts; the driver starts ingest (and limit changes);
 *   4. the receiver is polled until every event was answered 2xx or the time limit passed,
 *      then 500 ms more for late duplicates; for `cost-curve`, an idle tail of `idleS`
 *      seconds, and what the target holds (bytes, by store) before and after;
 *      an isolation scenario's run waits for its measured events only (not the noise);
 *   5. peak RSS (VmHWM) is read, the driver stops the target (it cleans its temp dir and
 *      Redis keys), the receiver dumps its NDJSON and stops;
 *   6. the analysis (analyze.ts) and the costs become one result record.
 *
 * For the targets that use Redis and Postgres, what they asked of them (budget.ts) is
 * counted from a mark 1.1 s after setup (Postgres's statistics of the setup flushed) just
 * before the first hand-over, to 1.5 s after the last first 2xx: the record's `budget`.
 */

import { type ChildProcess, fork } from 'node:child_process';
import { createWriteStream, existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { analyze, readArrivals, trailingSeries } from './analyze.ts';
import { BudgetProbe, COUNTED, callsFile } from './budget.ts';
import { now, percentile, round, sleep } from './common.ts';
import { measuredLatency } from './measured.ts';
import { PROBE_PAUSE_FILE } from './probe.ts';
import { ProcSampler } from './procstat.ts';
import type { AppliedChange, FromDriver, IngestStats, ToDriver } from './protocol.ts';
import { ReceiverProcess } from './receiver-client.ts';
import { foldRedisNodes } from './targets/redis-keys.ts';
import { type SluiceMetrics, tickLagBetween, tickLagByProcess } from './targets/sluice-metrics.ts';
import type { TargetName, TargetOptions } from './targets/target.ts';
import type { Scenario, Workload } from './workload.ts';

const DRIVER = fileURLToPath(new URL('./driver.ts', import.meta.url));
const PROBE = fileURLToPath(new URL('./probe.ts', import.meta.url));

/** The processes that make up each system under test (their CPU is the "system" CPU). */
const SYSTEM: Record<TargetName, string[]> = {
  sluice: ['sluice'],
  'sluice-distributed': ['api', 'rate-limiter', 'worker-1', 'worker-2', 'postgres', 'redis-server'],
  // redis-server: every node of the cluster, masters and replicas (foldRedisNodes).
  'sluice-cluster': ['api', 'rate-limiter', 'worker-1', 'worker-2', 'postgres', 'redis-server'],
  'bullmq-rlf': ['bullmq-rlf', 'redis-server'],
  ceiling: ['ceiling'],
};

/** Whose RSS the soak follows: Sluice's process (distributed: a delivery worker, the path every delivery takes). */
const SOAK_PROBE: Record<TargetName, string> = {
  sluice: 'sluice',
  'sluice-distributed': 'worker-1',
  'sluice-cluster': 'worker-1',
  'bullmq-rlf': 'driver',
  ceiling: 'driver',
};

class Driver {
  readonly child: ChildProcess;
  private readonly waiters: { kind: string; resolve: (m: FromDriver) => void }[] = [];
  readonly changes: AppliedChange[] = [];
  ingest: IngestStats | null = null;
  failure: string | null = null;

  constructor(runDir: string, target: TargetName) {
    const log = createWriteStream(join(runDir, 'driver.log'));
    // A target run in the driver's own process (the BullMQ baseline) counts its calls there.
    const counted = COUNTED[target].includes(target) ? { BENCH_CALLS_FILE: callsFile(runDir, target) } : {};
    this.child = fork(DRIVER, [], {
      execArgv: ['--import', PROBE],
      env: { ...process.env, BENCH_PROBE_FILE: join(runDir, 'driver-probe.ndjson'), ...counted },
      stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
    });
    this.child.stdout?.pipe(log);
    this.child.stderr?.pipe(log);
    this.child.on('message', (m: FromDriver) => {
      if (m.kind === 'changed') this.changes.push(m.change);
      if (m.kind === 'ingested') this.ingest = m.stats;
      if (m.kind === 'failed') this.failure = m.error;
      for (const w of [...this.waiters]) {
        if (w.kind === m.kind || m.kind === 'failed') {
          this.waiters.splice(this.waiters.indexOf(w), 1);
          w.resolve(m);
        }
      }
    });
    this.child.on('exit', (code) => {
      if (code !== 0 && this.failure === null) this.failure = `driver exited with ${code}`;
      for (const w of this.waiters.splice(0))
        w.resolve({ kind: 'failed', error: this.failure ?? 'driver exited' });
    });
  }

  send(message: ToDriver): void {
    this.child.send(message);
  }

  async request<K extends FromDriver['kind']>(
    message: ToDriver,
    kind: K,
    timeoutMs: number,
  ): Promise<Extract<FromDriver, { kind: K }>> {
    const answer = new Promise<FromDriver>((resolve) => this.waiters.push({ kind, resolve }));
    this.send(message);
    const timeout = sleep(timeoutMs).then(
      () => ({ kind: 'failed', error: `no ${kind} within ${timeoutMs} ms` }) as const,
    );
    const m = await Promise.race([answer, timeout]);
    if (m.kind === 'failed') throw new Error(`driver: ${m.error}`);
    return m as Extract<FromDriver, { kind: K }>;
  }

  kill(): void {
    if (this.child.exitCode === null) this.child.kill('SIGKILL');
  }
}

interface ProbeLine {
  t: number;
  /** Absent while the probe is paused (the idle tail). */
  eldP50?: number;
  eldP99?: number;
  eldMax?: number;
  rssMb: number;
  heapMb: number;
}

/**
 * What autovacuum does on a production server after a run's writes, done before the idle tail
 * when the server has it off (as the bench machine's shared one does): without it, every
 * version the run wrote stays in the partial indexes the sweeper walks (the claims of
 * `deliveries_claimed`, the pending walk), and the tail would measure the sweeps wading through
 * them (docs/performance.md, How to measure).
 * Returns the seconds it took, or null when autovacuum is on (it then runs when it would).
 */
async function vacuumUnlessAutovacuum(serverUrl: string, database: string): Promise<number | null> {
  const url = new URL(serverUrl);
  url.pathname = `/${database}`;
  const client = new pg.Client({ connectionString: url.href });
  await client.connect();
  try {
    const [setting] = (await client.query('SHOW autovacuum')).rows as { autovacuum: string }[];
    if (setting?.autovacuum === 'on') return null;
    const started = now();
    await client.query('VACUUM (ANALYZE)');
    return round((now() - started) / 1_000, 2);
  } finally {
    await client.end();
  }
}

function readProbe(file: string, from: number, to: number): ProbeLine[] {
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as ProbeLine)
    .filter((p) => p.t >= from && p.t <= to + 1_000);
}

function eldSummary(all: ProbeLine[]) {
  const lines = all.filter((l) => l.eldP99 !== undefined && l.eldMax !== undefined);
  if (lines.length === 0) return null;
  const p99s = lines.map((l) => l.eldP99 as number).sort((a, b) => a - b);
  return {
    seconds: lines.length,
    p99Median: percentile(p99s, 50),
    p99Worst: p99s[p99s.length - 1] ?? null,
    max: Math.max(...lines.map((l) => l.eldMax as number)),
  };
}

export interface RunOptions {
  scenario: Scenario;
  target: TargetName;
  workload: Workload;
  rep: number;
  runDir: string;
  runId: string;
  targetOptions: TargetOptions;
  /** Destinations whose trailing-second series the record keeps (for the plot). */
  plotDestinations?: string[];
  log: (line: string) => void;
}

export async function runOnce(o: RunOptions): Promise<Record<string, unknown>> {
  const { workload: w } = o;
  const receiver = await ReceiverProcess.start({ seed: 1 });
  const driver = new Driver(o.runDir, o.target);
  const sampler = new ProcSampler();
  let budget: BudgetProbe | null = null;
  let budgetRecord: Record<string, unknown> | null = null;
  const marks: Record<string, number> = {};
  const snapshots: Record<string, SluiceMetrics | null> = {};
  const storage: Record<string, Record<string, number> | null> = {};
  let stopStats: Record<string, unknown> = {};
  /** Seconds the VACUUM before each idle window took; null when none ran. */
  const vacuumed: Record<string, number | null> = {};
  let setup: Record<string, unknown> = {};
  let stopReason = 'time_limit';
  const countSeries: [number, number][] = [];
  try {
    const ready = await driver.request(
      {
        kind: 'setup',
        target: o.target,
        workload: w,
        receiverUrl: receiver.url,
        runId: o.runId,
        runDir: o.runDir,
        options: o.targetOptions,
      },
      'ready',
      1_800_000, // the cost curve's 100,000 destinations, one create at a time per connection
    );
    setup = ready.setup;
    sampler.add('receiver', receiver.pid);
    const pids = ready.pids;
    if (!Object.values(pids).includes(driver.child.pid as number))
      sampler.add('driver', driver.child.pid as number);
    for (const [name, pid] of Object.entries(pids)) sampler.add(name, pid);
    for (const [name, group] of Object.entries(ready.groups)) sampler.addGroup(name, group);
    sampler.start(w.scenario === 'soak' ? 1_000 : 250);
    const snap = async (mark: string): Promise<void> => {
      const m = await driver.request({ kind: 'snapshot', mark }, 'snapshot', 30_000);
      snapshots[mark] = m.data as SluiceMetrics | null;
    };
    await snap('start');
    const stored = async (mark: string): Promise<void> => {
      if (w.curve) storage[mark] = (await driver.request({ kind: 'storage' }, 'storage', 60_000)).data;
    };
    await stored('start');
    const database = typeof setup.database === 'string' ? setup.database : null;
    /**
     * `idleS` of nothing to do, between `<name>Start` and `<name>End`: the probes paused
     * (probe.ts: they pause within their next second), the run's database vacuumed first where
     * the server's autovacuum is off (as autovacuum would have). Answers the vacuum's seconds.
     */
    const idleWindow = async (name: string): Promise<number | null> => {
      const pause = join(o.runDir, PROBE_PAUSE_FILE);
      writeFileSync(pause, '');
      const vacuumS =
        database === null ? null : await vacuumUnlessAutovacuum(o.targetOptions.postgresUrl, database);
      await sleep(2_000);
      await snap(`${name}Start`); // before the mark: the scrape's own work is not the window's
      marks[`${name}Start`] = sampler.sample();
      await sleep(w.idleS * 1_000);
      marks[`${name}End`] = sampler.sample();
      await snap(`${name}End`);
      rmSync(pause, { force: true });
      return vacuumS;
    };
    // The floor: the same processes and destinations before any work, measured as the tail is.
    if (w.idleS > 0) {
      vacuumed.floor = await idleWindow('floor');
      await sleep(1_000); // the probes resume within a second: the run's first is measured
    }
    budget = await BudgetProbe.open(o.target, pids, o.runDir, o.targetOptions, database);
    if (budget) {
      await sleep(1_100);
      await budget.mark();
    }

    marks.start = sampler.sample();
    driver.send({ kind: 'start' });
    const measured = w.isolation?.measured;
    const expected = w.destinations
      .filter((d) => measured === undefined || d.id.startsWith(measured))
      .reduce((sum, d) => sum + d.events, 0);
    let lastLog = now();
    for (;;) {
      await sleep(250);
      if (driver.failure) throw new Error(`driver: ${driver.failure}`);
      const count = await receiver.count(measured);
      countSeries.push([now(), count.uniqueOk]);
      if ((count.uniqueOkPrefix ?? count.uniqueOk) >= expected) {
        stopReason = 'all_delivered';
        break;
      }
      if (now() - marks.start > w.timeLimitS * 1_000) break;
      if (now() - lastLog > 30_000) {
        lastLog = now();
        o.log(
          `    … ${count.uniqueOkPrefix ?? count.uniqueOk}/${expected} delivered, ${count.requests} requests`,
        );
      }
    }
    marks.done = sampler.sample();
    await sleep(500); // late duplicates
    await snap('done');
    if (budget) {
      await sleep(1_000);
      await budget.mark();
      budgetRecord = { ...(await budget.finish()) };
    }
    await stored('done'); // after the budget's last mark: its statements are the bench's
    // The send windows empty, the last completions are written.
    if (w.idleS > 0) vacuumed.idle = await idleWindow('idle');
    sampler.stop(); // reads VmHWM while every process still runs
    const stopped = await driver.request({ kind: 'stop' }, 'stopped', 180_000); // audit, drain, clean-up
    stopStats = stopped.stats;
  } finally {
    sampler.stop();
    driver.kill();
    if (budget && budgetRecord === null) await budget.close();
  }
  const dumpFile = join(o.runDir, 'receiver.ndjson');
  const dump = await receiver.dump(dumpFile);
  await receiver.stop();

  const t0 = driver.ingest?.t0;
  const arrivals = readArrivals(dumpFile);
  const { summary, perDestination, times } = analyze(arrivals, w, {
    t0,
    changes: driver.changes,
  });
  const changes = summary.limitChange?.details;
  if (summary.limitChange) delete summary.limitChange.details;
  writeFileSync(join(o.runDir, 'analysis.json'), JSON.stringify({ perDestination, changes }, null, 1));
  const cost = foldRedisNodes(sampler.cost(marks.start as number, marks.done as number));
  const systemCpuS = SYSTEM[o.target].reduce((sum, name) => sum + (cost[name]?.cpuS ?? 0), 0);
  const eldOf = (name: string) =>
    eldSummary(
      readProbe(join(o.runDir, `${name}-probe.ndjson`), marks.start as number, marks.done as number),
    );
  const record: Record<string, unknown> = {
    scenario: o.scenario,
    target: o.target,
    rep: o.rep,
    runId: o.runId,
    completed: summary.lost === 0,
    stopReason,
    runS: round(((marks.done as number) - (marks.start as number)) / 1_000),
    setup,
    ingest: driver.ingest,
    ...summary,
    systemCpuS: round(systemCpuS),
    systemCpuPct: round((100 * systemCpuS) / (((marks.done as number) - (marks.start as number)) / 1_000), 1),
    processes: Object.fromEntries(
      Object.entries(cost).map(([name, c]) => [
        name,
        {
          cpuS: round(c.cpuS),
          cpuPct: round(c.cpuPct, 1),
          maxCpuPct: round(c.maxCpuPct, 0),
          peakRssMb: round(c.peakRssMb, 1),
          hwmMb: round(c.hwmMb, 1),
        },
      ]),
    ),
    machine: sampler.machineUse(marks.start as number, marks.done as number),
    eventLoopDelayMs: {
      sluice: eldOf('sluice'),
      driver: eldOf('driver'),
      // The distributed shape's services (each has its own probe).
      ...Object.fromEntries(
        SYSTEM[o.target]
          .filter((name) => name !== 'sluice')
          .flatMap((name) => {
            const summary = eldOf(name);
            return summary ? [[name, summary]] : [];
          }),
      ),
    },
    receiver: {
      nice: receiver.nice,
      cpuS: round(dump.cpuS),
      eventLoopDelayP99Ms: round(dump.eventLoopDelayP99Ms),
      maxOpenConnections: dump.maxOpenConnections,
    },
    tickLag: tickLagBetween(snapshots.start ?? null, snapshots.done ?? null),
    tickLagByProcess: tickLagByProcess(snapshots.start ?? null, snapshots.done ?? null),
    ...(w.curve ? { curve: w.curve, storage } : {}),
    targetStats: stopStats,
    ...(budgetRecord ? { budget: budgetRecord } : {}),
  };
  if (w.isolation) {
    record.measured = measuredLatency(arrivals, w, marks.done as number, driver.ingest?.doneAt ?? null);
  }
  for (const name of ['floor', 'idle']) {
    const from = marks[`${name}Start`];
    const to = marks[`${name}End`];
    if (from === undefined || to === undefined) continue;
    const cost = foldRedisNodes(sampler.cost(from, to));
    const seconds = (to - from) / 1_000;
    const cpuS = SYSTEM[o.target].reduce((sum, p) => sum + (cost[p]?.cpuS ?? 0), 0);
    record[name] = {
      seconds: round(seconds),
      systemCpuS: round(cpuS, 3),
      systemCpuPct: round((100 * cpuS) / seconds, 2),
      ticks:
        tickLagBetween(snapshots[`${name}Start`] ?? null, snapshots[`${name}End`] ?? null)?.ticks ?? null,
      vacuumS: vacuumed[name] ?? null,
      // Each process's share of it (the distributed shape has seven), to say which one idles dearly.
      cpuSByProcess: Object.fromEntries(SYSTEM[o.target].map((p) => [p, round(cost[p]?.cpuS ?? 0, 3)])),
    };
  }
  if (w.scenario === 'soak') {
    const probeOf = SOAK_PROBE[o.target];
    record.soak = soakSeries(
      join(o.runDir, `${probeOf}-probe.ndjson`),
      countSeries,
      marks.start as number,
      marks.done as number,
    );
  }
  if (o.plotDestinations && summary.t0 !== null) {
    record.plot = {
      series: trailingSeries(times, o.plotDestinations, summary.t0),
      limits: Object.fromEntries(
        perDestination.filter((d) => o.plotDestinations?.includes(d.id)).map((d) => [d.id, d.limit]),
      ),
    };
  }
  return record;
}

/** Soak: RSS and event-loop delay of Sluice against deliveries so far, and RSS at 100k and at the end. */
function soakSeries(probeFile: string, counts: [number, number][], from: number, to: number) {
  const probe = readProbe(probeFile, from, to);
  const deliveredAt = (t: number): number => {
    let n = 0;
    for (const [ct, c] of counts) {
      if (ct > t) break;
      n = c;
    }
    return n;
  };
  const series = probe.map((p) => ({
    s: round((p.t - from) / 1_000, 1),
    delivered: deliveredAt(p.t),
    rssMb: p.rssMb,
    heapMb: p.heapMb,
    eldP99: p.eldP99 ?? 0, // the soak has no idle tail: never paused
  }));
  const at = (n: number) => series.find((x) => x.delivered >= n) ?? null;
  const last = series[series.length - 1] ?? null;
  const first100k = at(100_000);
  return {
    rssAt100kMb: first100k?.rssMb ?? null,
    rssAtEndMb: last?.rssMb ?? null,
    rssGrowthPct:
      first100k && last ? round((100 * (last.rssMb - first100k.rssMb)) / first100k.rssMb, 1) : null,
    eldP99WorstMs: series.length > 0 ? Math.max(...series.map((x) => x.eldP99)) : null,
    series: series.filter((_, i) => i % Math.max(1, Math.floor(series.length / 300)) === 0),
  };
}
