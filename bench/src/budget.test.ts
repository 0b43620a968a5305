/**
 * The budget's counting and its table, without a server: the differences between two marks,
 * INFO commandstats parsing, what calls-probe.ts counts in a process (ioredis and pg
 * commands queued before any connection), and the report's section over synthetic runs.
 */

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { diff, parseCommandStats } from './budget.ts';
import { commandKey, statementKey } from './calls-probe.ts';
import { budgetSection } from './report-budget.ts';
import type { Cells, RunRecord } from './report-rows.ts';
import { foldRedisNodes } from './targets/redis-keys.ts';

test('diff keeps what changed between two marks, new keys from zero', () => {
  assert.deepEqual(diff({ a: 1, b: 5 }, { a: 4, b: 5, c: 2 }), { a: 3, c: 2 });
});

test('parseCommandStats reads calls by command, subcommands included', () => {
  const info =
    '# Commandstats\r\ncmdstat_evalsha:calls=12,usec=340,usec_per_call=28.3\r\ncmdstat_client|setname:calls=2,usec=1\r\n';
  assert.deepEqual(parseCommandStats(info), { evalsha: 12, 'client|setname': 2 });
});

test('a cluster’s nodes are summed into redis-server, its masters and its replicas; one server is left alone', () => {
  const c = (cpuS: number) => ({ pid: 1, cpuS, cpuPct: cpuS * 10, maxCpuPct: cpuS, peakRssMb: 5, hwmMb: 6 });
  const folded = foldRedisNodes({
    api: c(9),
    'redis-master-1': c(1),
    'redis-master-2': c(2),
    'redis-replica-1': c(0.5),
  });
  assert.equal(folded.api?.cpuS, 9);
  assert.equal(folded['redis-master-2']?.cpuS, 2);
  assert.deepEqual(folded['redis-server'], {
    cpuS: 3.5,
    cpuPct: 35,
    maxCpuPct: 3.5,
    peakRssMb: 15,
    hwmMb: 18,
  });
  assert.equal(folded['redis-masters']?.cpuS, 3);
  assert.equal(folded['redis-replicas']?.cpuS, 0.5);
  const single = { api: c(9), 'redis-server': c(1) };
  assert.equal(foldRedisNodes(single), single);
});

test('a script call is named after its script; a statement by its flattened text', () => {
  const names = new Map([['abc', 'moveToActive']]);
  assert.equal(commandKey('evalsha', 'abc', names), 'script moveToActive');
  assert.equal(commandKey('EVALSHA', 'zzz', names), 'evalsha');
  assert.equal(commandKey('ZADD', 'k', names), 'zadd');
  assert.equal(statementKey({ text: 'SELECT 1\n   FROM t' }), '[select t] SELECT 1 FROM t');
  assert.equal(
    statementKey(
      'WITH a AS (INSERT INTO events SELECT 1), b AS (INSERT INTO deliveries SELECT 2) UPDATE x SET y = 1',
    ),
    '[insert events, deliveries; update x] WITH a AS (INSERT INTO events SELECT 1), b AS (INSERT INTO deliveries SELECT 2) U…',
  );
  assert.equal(statementKey('BEGIN'), 'BEGIN');
  // A row lock is not a write.
  assert.match(
    statementKey(
      'WITH c AS (SELECT 1 FROM destinations FOR NO KEY UPDATE OF d SKIP LOCKED) UPDATE deliveries SET a = 1',
    ),
    /^\[update deliveries\] /,
  );
  assert.equal(statementKey('x'.repeat(200)).length, 120);
});

test('calls-probe counts a process’s commands and statements and writes them on SIGUSR2', () => {
  const dir = mkdtempSync(join(tmpdir(), 'budget-test-'));
  const file = join(dir, 'calls.ndjson');
  const probe = fileURLToPath(new URL('./calls-probe.ts', import.meta.url));
  // Nothing listens on port 1: the commands are counted as sent, then fail.
  const script = `
    import { Redis } from 'ioredis';
    import pg from 'pg';
    const redis = new Redis({ port: 1, lazyConnect: true, retryStrategy: () => null });
    redis.on('error', () => {});
    redis.defineCommand('myScript', { numberOfKeys: 1, lua: 'return 1' });
    await redis.get('k').catch(() => {});
    await redis.myScript('k').catch(() => {});
    const client = new pg.Client({ port: 1 });
    client.on('error', () => {});
    client.query('SELECT   1').catch(() => {});
    await client.connect().catch(() => {});
    process.kill(process.pid, 'SIGUSR2');
    await new Promise((r) => setTimeout(r, 50));
    redis.disconnect();
  `;
  try {
    execFileSync(process.execPath, ['--import', probe, '--input-type=module', '-e', script], {
      cwd: fileURLToPath(new URL('../', import.meta.url)),
      env: { ...process.env, BENCH_CALLS_FILE: file },
    });
    const line = JSON.parse(readFileSync(file, 'utf8').trim()) as { redis: object; pg: object };
    assert.equal((line.redis as Record<string, number>).get, 1);
    assert.equal((line.redis as Record<string, number>)['script myScript'], 1);
    assert.deepEqual(line.pg, { 'SELECT 1': 1 });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

function run(target: string, scenario: string, extra: Partial<RunRecord>): RunRecord {
  return { target, scenario, delivered: 100, processes: {}, systemCpuS: 0.1, ...extra } as RunRecord;
}

test('the budget section: CPU µs, commands and statements per delivery, and the top entries', () => {
  const budget = {
    window: '',
    redisPrivate: true,
    processes: {
      api: { redis: { 'script accept': 100 }, pg: { BEGIN: 100, COMMIT: 100 } },
      'worker-1': { redis: { 'script moveToActive': 150 }, pg: { 'UPDATE attempts': 50 } },
      'worker-2': { redis: { 'script moveToActive': 70 }, pg: { 'UPDATE attempts': 50 } },
    },
    redisServer: { evalsha: 320, zadd: 400 },
    postgresServer: { xact_commit: 150, tup_inserted: 200 },
  };
  const cells: Cells = new Map([
    [
      'latency/sluice-distributed',
      [run('sluice-distributed', 'latency', { processes: { api: { cpuS: 0.05 } } as never, budget })],
    ],
    ['throughput/sluice', [run('sluice', 'throughput', { processes: { sluice: { cpuS: 0.02 } } as never })]],
  ]);
  const md = budgetSection(cells, '##').join('\n');
  assert.match(md, /\| \*\*CPU µs\*\*: API \| 500 \| – \|/);
  assert.match(md, /\| CPU µs: single box process \| – \| 200 \|/);
  assert.match(md, /\| \*\*Redis commands sent\*\* \(every process; a script call is one\) \| 3\.2 \| – \|/);
  assert.match(md, /\| Redis commands run by redis-server .* \| 7\.2 \| – \|/);
  assert.match(md, /\| \*\*Postgres statements sent\*\* .* \| 3 \| – \|/);
  assert.match(md, /\| Postgres transactions committed \(pg_stat_database\) \| 1\.5 \| – \|/);
  assert.match(md, /\| workers · script moveToActive \| 2\.2 \|/);
  assert.match(md, /\| API · `BEGIN` \| 1 \|/);
  // A variant shows the section only when its runs counted calls.
  assert.deepEqual(budgetSection(new Map([...cells].slice(1)), '###'), []);
});
