/**
 * `npm test -w @sluice/test`: the behavioural suite, both shapes at once (docs/design.md I7).
 *
 * Each file runs in a process of its own (node:test's `run`), several at a time per shape: every
 * test owns its port, data dir, database and key prefix, and the tests wait on receivers and rate
 * windows far more than they compute. A file that checks what is the same in both shapes (the
 * API's contract, static files, the client's package) runs in one shape only — `ONE_SHAPE` says
 * which and why; the rest run in both. The distributed shape needs Postgres and Redis: where one
 * does not answer, the run fails before any test, naming it and how to start it.
 *
 *   node helpers/run-suite.ts                       both shapes, every file
 *   node helpers/run-suite.ts --shape distributed   one shape
 *   node helpers/run-suite.ts idle.test.ts limit.test.ts
 *
 * `SLUICE_TEST_CONCURRENCY` sets how many files run at once (both shapes together).
 */

import { readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { run } from 'node:test';
import { spec } from 'node:test/reporters';
import { parseArgs } from 'node:util';
import { requirePostgres, requireRedis } from '@sluice/testing';
import { DATABASE_URL, REDIS_URL, type Shape } from './shape.ts';

/**
 * Files whose every case is the same in both shapes, run once in the shape named. What is not
 * here runs in both. (The distributed shape's own files also skip themselves when run by hand
 * in the single box; the API's files run in either.)
 */
const ONE_SHAPE: Record<string, Shape> = {
  // The routes' own tests (packages/api, in-process over SQLite) check the contract; this file
  // checks it end to end once more, over Postgres and Redis.
  'api-contract.test.ts': 'distributed',
  // Validation answers before any store is reached.
  'api-bad-input.test.ts': 'single',
  // The served document and the guide's commands: the contract alone.
  'api-openapi.test.ts': 'single',
  'api-guide.test.ts': 'single',
  // Packaging, static files, the repository itself.
  'client-package.test.ts': 'single',
  'deploy.test.ts': 'single',
  'k8s.test.ts': 'single',
  'repository.test.ts': 'single',
  // What only the distributed shape has: its services, Redis, Redis Cluster.
  'disk-full.test.ts': 'distributed',
  'distributed.test.ts': 'distributed',
  'distributed-redis-loss.test.ts': 'distributed',
  'outage-redis.test.ts': 'distributed',
  'redis-cluster.test.ts': 'distributed',
};

/**
 * The longest files start first, so that the pool's tail is short (each runs for tens of
 * seconds of rate windows); the rest follow in name order.
 */
const LONGEST_FIRST = [
  'redis-cluster.test.ts',
  'limit.test.ts',
  'distributed.test.ts',
  'outage.test.ts',
  'burst.test.ts',
  'breaker.test.ts',
  'settings.test.ts',
  'live-change.test.ts',
  'portal-tokens.test.ts',
  'retries.test.ts',
  'crash.test.ts',
];

/**
 * Files whose assertions are about time at the receiver: a latency beside a load against one
 * alone (busy-tenant, hanging-tenant, isolation), a receiver's per-second capacity (adaptive).
 * The pool's files would load one measurement and not another, so these run after the pool,
 * two at a time: never two of `LATENCY` at once (each compares a p99 beside its own load with
 * one alone), and adaptive beside them (a receiver's capacity counted in a thread of its own,
 * with few requests a second).
 */
const LATENCY = new Set(['busy-tenant.test.ts', 'hanging-tenant.test.ts', 'isolation.test.ts']);
const ALONE = new Set([...LATENCY, 'adaptive.test.ts']);

/**
 * Files that start clusters of service processes (up to eight, each with its own Postgres
 * pool): one at a time, so that the suite stays within the server's 100 connections.
 */
const CLUSTERS = new Set(['redis-cluster.test.ts', 'distributed.test.ts']);

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { shape: { type: 'string' } },
});
const shapes: Shape[] =
  values.shape === undefined
    ? ['single', 'distributed']
    : [values.shape === 'distributed' ? 'distributed' : 'single'];
const concurrency = Number(process.env.SLUICE_TEST_CONCURRENCY ?? 6);
if (!Number.isInteger(concurrency) || concurrency < 1) {
  throw new Error(
    `SLUICE_TEST_CONCURRENCY must be a whole number ≥ 1, got ${process.env.SLUICE_TEST_CONCURRENCY}`,
  );
}

const dir = dirname(import.meta.dirname);
const rank = (file: string) => {
  const at = LONGEST_FIRST.indexOf(file);
  return at === -1 ? LONGEST_FIRST.length : at;
};
const all = (positionals.length > 0 ? positionals : readdirSync(dir).filter((f) => f.endsWith('.test.ts')))
  .map((f) => f.replace(/^.*\//, ''))
  .sort((a, b) => rank(a) - rank(b) || a.localeCompare(b));

function filesOf(shape: Shape): string[] {
  // Files named on the command line run as asked, whatever ONE_SHAPE says.
  if (positionals.length > 0) return all;
  return all.filter((f) => (ONE_SHAPE[f] ?? shape) === shape);
}

interface Job {
  shape: Shape;
  file: string;
}

interface Outcome extends Job {
  pass: number;
  fail: number;
  skipped: number;
  ms: number;
}

/**
 * Runs one file in one shape and prints its report whole when it ends, each line tagged with
 * the shape, so that the reports of files running side by side do not interleave.
 */
async function runFile(job: Job): Promise<Outcome> {
  const outcome: Outcome = { ...job, pass: 0, fail: 0, skipped: 0, ms: 0 };
  const started = Date.now();
  const stream = run({ files: [join(dir, job.file)], env: { ...process.env, SLUICE_TEST_SHAPE: job.shape } });
  stream.on('test:pass', (data) => {
    if (data.details.type === 'suite') return;
    if (data.skip !== undefined && data.skip !== false) outcome.skipped++;
    else outcome.pass++;
  });
  stream.on('test:fail', (data) => {
    if (data.details.type !== 'suite') outcome.fail++;
  });
  let report = '';
  for await (const chunk of stream.compose(new spec())) report += String(chunk);
  outcome.ms = Date.now() - started;
  const lines = report
    .split('\n')
    .filter(
      (line) => line !== '' && !/^ℹ (tests|suites|pass|fail|cancelled|skipped|todo|duration_ms) /.test(line),
    );
  lines.push(
    `ℹ ${job.file}: ${outcome.pass} passed, ${outcome.fail} failed, ${outcome.skipped} skipped in ${(outcome.ms / 1000).toFixed(1)} s`,
  );
  process.stdout.write(lines.map((line) => `[${job.shape}] ${line}\n`).join(''));
  return outcome;
}

/** A pool of `size` runners over the jobs, in order, never two of `exclusive` at once. */
async function runAll(jobs: Job[], size: number, exclusive: Set<string>): Promise<Outcome[]> {
  const queue = [...jobs];
  const done: Outcome[] = [];
  let running: Promise<unknown> | undefined;
  const next = (): Job | undefined => {
    const at = queue.findIndex((job) => running === undefined || !exclusive.has(job.file));
    return at === -1 ? undefined : queue.splice(at, 1)[0];
  };
  const runner = async (): Promise<void> => {
    while (queue.length > 0) {
      const job = next();
      if (job === undefined) {
        // Only exclusive files are left, and one runs: wait for it.
        await running?.catch(() => undefined);
        continue;
      }
      const run = runFile(job);
      if (exclusive.has(job.file))
        running = run.finally(() => {
          running = undefined;
        });
      done.push(await run);
    }
  };
  await Promise.all(Array.from({ length: Math.min(size, jobs.length) }, runner));
  return done;
}

if (shapes.includes('distributed')) {
  const missing = (
    await Promise.allSettled([
      requirePostgres(DATABASE_URL),
      requireRedis(REDIS_URL, 'SLUICE_TEST_REDIS_URL'),
    ])
  ).flatMap((probe) => (probe.status === 'rejected' ? [String(probe.reason)] : []));
  if (missing.length > 0) {
    process.stderr.write(`\nthe distributed shape's tests cannot run:\n${missing.join('\n')}\n\n`);
    process.exit(1);
  }
}

const jobs = all.flatMap((file) =>
  shapes.filter((shape) => filesOf(shape).includes(file)).map((shape) => ({ shape, file })),
);
const started = Date.now();
const outcomes = [
  ...(await runAll(
    jobs.filter((job) => !ALONE.has(job.file)),
    concurrency,
    CLUSTERS,
  )),
  // The latency files first, one after another, and adaptive beside them.
  ...(await runAll(
    jobs
      .filter((job) => ALONE.has(job.file))
      .sort((a, b) => Number(LATENCY.has(b.file)) - Number(LATENCY.has(a.file))),
    2,
    LATENCY,
  )),
];
const wall = Date.now() - started;
const out: string[] = [
  '',
  `behavioural suite: ${jobs.length} runs of ${all.length} files, ${concurrency} at once (then ${[...ALONE].join(', ')}, two at a time), ${(wall / 1000).toFixed(0)} s`,
];
for (const shape of shapes) {
  const of = outcomes.filter((o) => o.shape === shape);
  const sum = (key: 'pass' | 'fail' | 'skipped') => of.reduce((n, o) => n + o[key], 0);
  out.push(
    `  ${shape}: ${of.length} files, ${sum('pass')} passed, ${sum('fail')} failed, ${sum('skipped')} skipped`,
  );
}
out.push(
  '  longest:',
  ...[...outcomes]
    .sort((a, b) => b.ms - a.ms)
    .slice(0, 8)
    .map((o) => `    ${(o.ms / 1000).toFixed(1).padStart(6)} s  ${o.shape} ${o.file}`),
);
const failed = outcomes.filter((o) => o.fail > 0);
if (failed.length > 0) out.push('  failed:', ...failed.map((o) => `    ${o.shape} ${o.file} (${o.fail})`));
const total = (key: 'pass' | 'fail' | 'skipped') => outcomes.reduce((n, o) => n + o[key], 0);
out.push(`${total('pass')} passed, ${total('fail')} failed, ${total('skipped')} skipped`, '');
process.stdout.write(out.join('\n'));
process.exitCode = total('fail') > 0 || outcomes.length < jobs.length ? 1 : 0;
