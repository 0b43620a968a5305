/**
 * `npm run bench`: Sluice against the usual Node approach (BullMQ + rate-limiter-flexible)
 * and the ceiling (undici straight to the receiver), scenario by scenario, measured at the
 * receiver. Appends one record per run to bench/results/runs.ndjson, then prunes it to what
 * BENCHMARKS.md shows and regenerates BENCHMARKS.md (report.ts) and the plots; a session
 * under a development or A/B label records in bench/results/dev/ instead (records.ts).
 *
 *   npm run bench                                   every scenario but soak, 3 repetitions
 *   npm run bench -- --scenarios compliance,latency --targets sluice,ceiling --reps 5
 *   npm run bench -- --scenarios soak --targets sluice      1,000,000 deliveries (long)
 *   npm run bench -- --quick                        correctness only, ~1 min (npm test)
 *   npm run bench -- --report                       only prune results/ and regenerate BENCHMARKS.md
 *
 * Other flags: --sluice-ref <git ref> (bench a committed version), --profile (Sluice under
 * --cpu-prof, summarised by profile.ts), --sluice-env KEY=VALUE, --label <name> (a
 * development or A/B session, or a reported variant: records.ts), --soak-total N, --soak-rate
 * N (events/s), --latency-rate N (events/s; 400), --curve-sizes 1000,10000,100000 (cost-curve: destinations of each run), --curve-rate R
 * (its events/s: `1000`, or per target `1000,sluice-distributed=400`), --curve-seconds S (a
 * size's run at least S s; 20), --curve-idle S (the idle tail, s; 10), --cluster-replicas N
 * (sluice-cluster's replicas a master; 0: three masters alone, as one Redis has none), --no-report. The
 * environment's $BENCH_NODE_ARGS adds Node/V8 flags to every Sluice process (`--trace-gc`).
 *
 * --quick asserts, for every run: nothing lost, no duplicates, one webhook-id per event, and
 * (for the limiting targets) no sliding window over the limit — at the receiver, and for
 * Sluice also by its own audit (`stats.maxSentInAnyWindow`); it never asserts a time. It
 * runs the single box, the ceiling and the distributed shape's compliance run (~6 s), which
 * needs Postgres and Redis: without them it fails, saying how to start them. Its logs go to a
 * temp directory.
 */

import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { START_POSTGRES, START_REDIS, startPrivateCluster, startPrivateRedis } from '@sluice/testing';
import { errorMessage, newRunId } from './common.ts';
import {
  CURVE_DEFAULTS,
  CURVE_QUICK,
  type CurveOptions,
  curveRate,
  curveWorkload,
  parseCurveRate,
  parseCurveSizes,
} from './curve.ts';
import { runIsolation } from './isolation.ts';
import { machineInfo, postgresInfo, redisInfo } from './machine.ts';
import { appendRecord, isReported, RUNS_FILE, recordsDir, SESSIONS_FILE } from './records.ts';
import { writeDevReport, writeReport } from './report.ts';
import { runOnce } from './run.ts';
import { prepareSnapshot } from './snapshot.ts';
import { TARGETS, type TargetName, type TargetOptions } from './targets/target.ts';
import {
  buildWorkload,
  ISOLATION,
  SCENARIOS,
  type Scenario,
  SLUICE_ONLY,
  type Workload,
} from './workload.ts';

const BENCH = fileURLToPath(new URL('../', import.meta.url));
const REPO = join(BENCH, '..');
const RESULTS = join(BENCH, 'results');
const DEFAULT_SCENARIOS: Scenario[] = [
  'compliance',
  'latency',
  'throughput',
  'cost-curve',
  'limit-change',
  'failures',
  'capacity',
  'capacity-adaptive',
  'slow-receiver',
  'busy-tenant',
  'hanging-tenant',
];
const QUICK_SCENARIOS: Scenario[] = ['compliance', 'limit-change', 'failures', 'cost-curve'];
/** What `sluice-cluster` runs when --targets does not name it: the cluster's own targets. */
const CLUSTER_SCENARIOS: Scenario[] = ['compliance', 'throughput'];
const LIMITING: TargetName[] = ['sluice', 'sluice-distributed', 'sluice-cluster', 'bullmq-rlf'];

const { values } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    scenarios: { type: 'string' },
    targets: { type: 'string' },
    reps: { type: 'string' },
    'sluice-ref': { type: 'string' },
    'sluice-root': { type: 'string' },
    'sluice-env': { type: 'string', multiple: true },
    profile: { type: 'boolean', default: false },
    label: { type: 'string' },
    'soak-total': { type: 'string', default: '1000000' },
    'soak-rate': { type: 'string', default: '1000' },
    'latency-rate': { type: 'string', default: '400' },
    'curve-sizes': { type: 'string' },
    'curve-rate': { type: 'string' },
    'curve-seconds': { type: 'string' },
    'curve-idle': { type: 'string' },
    'cluster-replicas': { type: 'string', default: '0' },
    report: { type: 'boolean', default: false },
    'no-report': { type: 'boolean', default: false },
  },
  strict: true,
});

function list<T extends string>(raw: string | undefined, allowed: readonly T[], fallback: T[]): T[] {
  if (!raw) return fallback;
  const items = raw.split(',').map((s) => s.trim()) as T[];
  for (const item of items) {
    if (!allowed.includes(item)) throw new Error(`unknown "${item}"; one of ${allowed.join(', ')}`);
  }
  return items;
}

if (Number(process.versions.node.split('.')[0]) < 24) {
  process.stderr.write(
    `Node ${process.versions.node}: run with Node 24 (npm run bench puts it first on PATH)\n`,
  );
  process.exit(2);
}
if (values.report) {
  report();
  if (writeDevReport(join(RESULTS, 'dev'))) process.stdout.write('results/dev/report.md written\n');
  process.exit(0);
}

/** BENCHMARKS.md, after pruning the committed records to what it shows (records.ts). */
function report(): void {
  const pruned = writeReport(RESULTS, join(REPO, 'BENCHMARKS.md'));
  const dropped = pruned.runs.before - pruned.runs.after;
  process.stdout.write(
    `BENCHMARKS.md written from results/: ${pruned.runs.after} runs of ${pruned.sessions.after} sessions${dropped > 0 ? ` (${dropped} runs it no longer shows left out; git keeps them)` : ''}\n`,
  );
}

const quick = values.quick;
// A session whose targets use Redis gets its own redis-server (@sluice/testing, stopped
// at the end, killed if the bench exits first): the shared one's counters and CPU include every
// other session's. REDIS_HOST/REDIS_PORT name a server to use instead; --quick (the tests)
// uses the configured one.
const configuredRedis = process.env.REDIS_HOST !== undefined || process.env.REDIS_PORT !== undefined;
const wantsRedis =
  !quick &&
  list(values.targets, TARGETS, [...TARGETS]).some((t) => t === 'bullmq-rlf' || t === 'sluice-distributed');
const privateRedis =
  wantsRedis && !configuredRedis
    ? await startPrivateRedis().catch((err: unknown) => {
        process.stderr.write(
          `redis-server could not be started (${errorMessage(err)}): the shared Redis on 6379 it is (its counters include other users)\n`,
        );
        return null;
      })
    : null;
const redis = privateRedis
  ? { host: privateRedis.host, port: privateRedis.port }
  : { host: process.env.REDIS_HOST ?? '127.0.0.1', port: Number(process.env.REDIS_PORT ?? 6379) };
const postgresUrl = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/';
const scenarios = list(values.scenarios, SCENARIOS, quick ? QUICK_SCENARIOS : DEFAULT_SCENARIOS);
const reps = Number(values.reps ?? (quick ? 1 : 3));
// sluice-cluster runs on a Redis Cluster of the session's own (3 masters on loopback, with
// --cluster-replicas replicas each: none by default, as the one Redis it is measured against
// has none), started only when a session's targets name it (--quick never does unless asked),
// stopped at the end, killed if the bench exits first.
if (!/^\d$/.test(values['cluster-replicas'] ?? '')) {
  process.stderr.write(
    `--cluster-replicas must be a whole number from 0 to 9: ${values['cluster-replicas']}\n`,
  );
  process.exit(2);
}
const clusterReplicas = Number(values['cluster-replicas']);
const privateCluster =
  list(values.targets, TARGETS, quick ? [] : [...TARGETS]).includes('sluice-cluster') &&
  (values.targets !== undefined || scenarios.some((s) => CLUSTER_SCENARIOS.includes(s)))
    ? await startPrivateCluster({ replicasPerMaster: clusterReplicas }).catch((err: unknown) => {
        process.stderr.write(
          `a Redis Cluster could not be started (${errorMessage(err)}); sluice-cluster needs redis-server and redis-cli on PATH (or leave it out of --targets)\n`,
        );
        process.exit(2);
      })
    : null;
const redisUp = (await redisInfo(redis)) !== null;
const missingForDistributed = [
  ...(redisUp ? [] : [`Redis at ${redis.host}:${redis.port} (start it: ${START_REDIS})`]),
  ...((await postgresInfo(postgresUrl)) === null
    ? [`Postgres at ${postgresUrl} (BENCH_DATABASE_URL; start it: ${START_POSTGRES})`]
    : []),
];
let targets: TargetName[];
if (values.targets || !quick) {
  targets = list(values.targets, TARGETS, [...TARGETS]);
} else if (missingForDistributed.length === 0) {
  targets = ['sluice', 'sluice-distributed', 'ceiling'];
} else {
  // --quick checks the distributed shape too: without Postgres or Redis it fails, never skips.
  process.stderr.write(
    `bench --quick: the distributed shape needs ${missingForDistributed.join(' and ')}, not reachable\n`,
  );
  process.exit(1);
}
if (targets.includes('bullmq-rlf') && !redisUp) {
  process.stderr.write(
    `Redis is not reachable at ${redis.host}:${redis.port}; bullmq-rlf needs it (or pass --targets sluice,ceiling)\n`,
  );
  process.exit(2);
}
if (targets.includes('sluice-distributed') && missingForDistributed.length > 0) {
  process.stderr.write(
    `${missingForDistributed.join(' and ')} not reachable; sluice-distributed needs both (or pass --targets sluice,bullmq-rlf,ceiling)\n`,
  );
  process.exit(2);
}
const postgresUp = !missingForDistributed.some((m) => m.startsWith('Postgres'));
if (targets.includes('sluice-cluster') && !postgresUp) {
  process.stderr.write(
    `Postgres at ${postgresUrl} not reachable; sluice-cluster needs it (BENCH_DATABASE_URL)\n`,
  );
  process.exit(2);
}

let sluiceRoot = values['sluice-root'] ?? REPO;
let sluiceRef: string | null = null;
if (values['sluice-ref']) {
  const snapshot = prepareSnapshot(REPO, values['sluice-ref']);
  sluiceRoot = snapshot.root;
  sluiceRef = snapshot.commit;
}
const sluiceEnv = Object.fromEntries(
  (values['sluice-env'] ?? []).map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)]),
);
const targetOptions: TargetOptions = {
  sluiceRoot,
  profile: values.profile,
  redis,
  redisPrivate: privateRedis !== null,
  ...(privateCluster ? { redisCluster: { url: privateCluster.url, seeds: privateCluster.seeds } } : {}),
  postgresUrl,
  sluiceEnv,
};
const scenarioOptions = {
  quick,
  soakTotal: Number(values['soak-total']),
  soakRate: Number(values['soak-rate']),
  latencyRate: Number(values['latency-rate']),
};
const curveBase = quick ? CURVE_QUICK : CURVE_DEFAULTS;
const curveOptions: CurveOptions = {
  ...curveBase,
  ...(values['curve-sizes'] ? { sizes: parseCurveSizes(values['curve-sizes']) } : {}),
  ...(values['curve-rate'] ? parseCurveRate(values['curve-rate'], TARGETS) : {}),
  ...(values['curve-seconds'] ? { minSeconds: Number(values['curve-seconds']) } : {}),
  ...(values['curve-idle'] ? { idleS: Number(values['curve-idle']) } : {}),
};

/** A scenario's workloads on a target: one, or the cost curve's one per size. */
const workloadsOf = (scenario: Scenario, target: TargetName): Workload[] =>
  scenario === 'cost-curve'
    ? curveOptions.sizes.map((size) => curveWorkload(curveOptions, size, curveRate(curveOptions, target)))
    : [buildWorkload(scenario, scenarioOptions)];

const session = newRunId();
// Unlabelled and reported variants' sessions are the committed records; any other label's
// go to results/dev/ (ignored by git).
const label = values.label ?? null;
const records = recordsDir(RESULTS, label);
const logRoot = quick ? join(tmpdir(), `sluice-bench-${session}`) : join(RESULTS, 'logs', session);
mkdirSync(logRoot, { recursive: true });
const log = (line: string): void => {
  process.stdout.write(`${line}\n`);
};

const machine = await machineInfo(REPO, redis, postgresUrl);
const sessionRecord = {
  session,
  date: new Date().toISOString(),
  command: `npm run bench${process.argv.length > 2 ? ` -- ${process.argv.slice(2).join(' ')}` : ''}`,
  quick,
  label,
  scenarios,
  targets,
  reps,
  sluiceRef: sluiceRef ?? machine.sluiceCommit,
  sluiceDirty: sluiceRef ? false : machine.sluiceDirty,
  sluiceEnv,
  redisPrivate: privateRedis !== null,
  redisCluster: privateCluster !== null,
  machine,
};
if (!quick) appendRecord(records, SESSIONS_FILE, sessionRecord);
log(`session ${session}: ${scenarios.join(', ')} × ${targets.join(', ')} × ${reps} (logs in ${logRoot})`);
if (!quick && !isReported(label)) log(`label ${label}: development runs, recorded in ${records}`);

const failures: string[] = [];
for (let rep = 1; rep <= reps; rep++) {
  for (const scenario of scenarios) {
    for (const target of targets) {
      // --quick: the ceiling (no limiter) only checks the harness itself, once; the
      // distributed shape, unless asked for by name, once too (the behavioural test suite
      // runs in both shapes).
      const once = target === 'ceiling' || (target === 'sluice-distributed' && !values.targets);
      if (quick && once && scenario !== 'compliance') continue;
      // Adaptive pacing is Sluice's: the baselines would only repeat their `capacity` run.
      if (SLUICE_ONLY.includes(scenario) && !target.startsWith('sluice')) continue;
      // Isolation is between a limiter's destinations and tenants: the ceiling has neither.
      if (ISOLATION.includes(scenario) && target === 'ceiling') continue;
      // The cluster answers what it costs against one Redis; elsewhere it runs when named.
      if (target === 'sluice-cluster' && !values.targets && !CLUSTER_SCENARIOS.includes(scenario)) continue;
      for (const workload of workloadsOf(scenario, target)) {
        const size = workload.curve ? `-${workload.curve.size}` : '';
        const runId = newRunId();
        const runDir = join(logRoot, `${scenario}-${target}-${rep}${size}`);
        mkdirSync(runDir, { recursive: true });
        const name = `${scenario} × ${target} #${rep}${size}`;
        log(`▶ ${name}`);
        let record: Record<string, unknown>;
        const run = ISOLATION.includes(scenario) ? runIsolation : runOnce;
        try {
          record = await run({
            scenario,
            target,
            workload,
            rep,
            runDir,
            runId,
            targetOptions,
            plotDestinations: scenario === 'compliance' ? plotDestinations(workload) : undefined,
            log,
          });
        } catch (err) {
          failures.push(`${name}: ${errorMessage(err)}`);
          log(`  ✗ ${errorMessage(err)} (logs: ${runDir})`);
          record = { scenario, target, rep, runId, curve: workload.curve, error: errorMessage(err) };
        }
        record = { session, label, date: new Date().toISOString(), ...record };
        if (!quick) appendRecord(records, RUNS_FILE, record);
        writeFileSync(join(runDir, 'result.json'), JSON.stringify(record, null, 1));
        if (record.error === undefined) log(`  ${oneLine(record)}`);
        if (quick && record.error === undefined) failures.push(...check(name, target, record));
      }
    }
  }
}

function plotDestinations(w: ReturnType<typeof buildWorkload>): string[] {
  const byLimit = new Map<number, string>();
  for (const d of w.destinations) if (!byLimit.has(d.limit)) byLimit.set(d.limit, d.id);
  return [...byLimit.values()];
}

function oneLine(r: Record<string, unknown>): string {
  const lat = r.latencyMs as { p50: number; p99: number };
  return [
    `delivered ${r.delivered}/${r.expected}`,
    `lost ${r.lost}`,
    `dup ${r.duplicated}`,
    `worst/limit ${r.worstRatio}`,
    `over ${r.destinationsOver}`,
    `wall ${r.wallS}s (ideal ${r.idealS})`,
    `${r.deliveriesPerS}/s`,
    `p50 ${lat.p50} p99 ${lat.p99} ms`,
    `cpu ${r.systemCpuS}s`,
    ...(r.curve ? [curveLine(r)] : []),
  ].join(' · ');
}

/** A cost-curve run: its size and rate, CPU per delivery, tick lag and idle tail. */
function curveLine(r: Record<string, unknown>): string {
  const c = r.curve as { size: number; rate: number };
  const lag = r.tickLag as { p50AtMostMs: number | null; p99AtMostMs: number | null } | null;
  const idle = r.idle as { systemCpuPct: number; ticks: number | null } | undefined;
  const us = Math.round((1e6 * (r.systemCpuS as number)) / Math.max(1, r.delivered as number));
  return `${c.size} destinations at ${c.rate}/s: ${us} µs/delivery, tick lag p50 ≤ ${lag?.p50AtMostMs} p99 ≤ ${lag?.p99AtMostMs} ms, idle ${idle?.systemCpuPct} % (${idle?.ticks} ticks)`;
}

/** --quick: correctness only, never a time. */
function check(name: string, target: TargetName, r: Record<string, unknown>): string[] {
  const problems: string[] = [];
  // An isolation run does not wait for its noise (the slow receiver's events, the backlog).
  const lost = (r.measured as { undelivered: number } | undefined)?.undelivered ?? r.lost;
  if (lost !== 0) problems.push(`${lost} events lost`);
  if (r.duplicated !== 0) problems.push(`${r.duplicated} duplicated`);
  if (r.webhookIdMismatches !== 0) problems.push(`${r.webhookIdMismatches} webhook-id changes`);
  if (LIMITING.includes(target) && r.destinationsOver !== 0) {
    problems.push(`${r.destinationsOver} destinations over their limit (worst ${r.worstRatio}× the limit)`);
  }
  // Sluice's own compliance audit (its stats, read through the client at stop) must agree.
  const audit = (r.targetStats as { apiAudit?: { over?: number; maxSentRatio?: number } } | undefined)
    ?.apiAudit;
  if (audit?.over) {
    problems.push(
      `Sluice's audit: ${audit.over} destinations over their limit (worst ${audit.maxSentRatio}×)`,
    );
  }
  log(
    problems.length === 0
      ? `  ✓ ${name}: nothing lost, no duplicates${LIMITING.includes(target) ? ', limit held' : ''}`
      : '',
  );
  return problems.map((p) => `${name}: ${p}`);
}

if (quick) {
  if (failures.length === 0) rmSync(logRoot, { recursive: true, force: true });
} else if (!values['no-report']) {
  if (isReported(label)) report();
  else if (writeDevReport(records)) log(`${join(records, 'report.md')} written`);
}
await privateRedis?.stop();
await privateCluster?.stop();
if (failures.length > 0) {
  process.stderr.write(`\n${failures.length} failure(s):\n${failures.map((f) => `  ${f}`).join('\n')}\n`);
  process.exit(1);
}
process.exit(0);
