/**
 * What the committed records keep (records.ts), over synthetic lines and over the committed
 * files themselves: they hold only what BENCHMARKS.md shows, at most 1 MiB, and the report
 * renders the same from them as from them with runs it does not show added.
 */

import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { prune, pruneRecords, RUNS_FILE, readRecords, recordsDir, SESSIONS_FILE } from './records.ts';
import { renderReport, writeDevReport } from './report.ts';

const BENCH = fileURLToPath(new URL('../', import.meta.url));
const RESULTS = join(BENCH, 'results');
const BENCHMARKS = join(BENCH, '..', 'BENCHMARKS.md');

const run = (sessionId: string, scenario: string, target: string, extra: object = {}): string =>
  JSON.stringify({ session: sessionId, scenario, target, label: null, rep: 1, ...extra });
const session = (id: string, label: string | null = null): string => JSON.stringify({ session: id, label });
const lines = (file: string): string[] => readFileSync(file, 'utf8').split('\n').filter(Boolean);
const writeLines = (file: string, all: string[]): void =>
  writeFileSync(file, all.map((l) => `${l}\n`).join(''));

/** A scratch directory laid out as the repository: `<dir>/bench/results`, `<dir>/BENCHMARKS.md`. */
function scratch(): { root: string; results: string; file: string } {
  const root = mkdtempSync(join(tmpdir(), 'bench-records-'));
  const results = join(root, 'bench', 'results');
  mkdirSync(results, { recursive: true });
  return { root, results, file: join(root, 'BENCHMARKS.md') };
}

test('a development or A/B label records in results/dev/; unlabelled and reported variants in results/', () => {
  assert.equal(recordsDir('/r', null), '/r');
  assert.equal(recordsDir('/r', 'cluster-ha'), '/r');
  assert.equal(recordsDir('/r', 'dev-x'), join('/r', 'dev'));
  assert.equal(recordsDir('/r', 'before'), join('/r', 'dev'));
  assert.equal(recordsDir('/r', 'ab-held-after-1'), join('/r', 'dev'));
});

test('prune keeps the latest session of each scenario × target, and of each reported variant', () => {
  const runs = [
    run('s1', 'compliance', 'sluice'),
    run('s1', 'latency', 'sluice'),
    run('s2', 'compliance', 'sluice', { rep: 1 }),
    run('s2', 'compliance', 'sluice', { rep: 2 }),
    // s3's latency failed: s1's stays the cell's
    run('s3', 'latency', 'sluice', { error: 'boom' }),
    run('s4', 'throughput', 'sluice-cluster', { label: 'cluster-ha' }),
    run('s5', 'throughput', 'sluice-cluster', { label: 'cluster-ha' }),
    run('s6', 'compliance', 'sluice', { label: 'dev-x' }),
    run('s7', 'compliance', 'sluice', { label: 'before' }),
  ];
  const sessions = [
    session('s1'),
    session('s2'),
    session('s3'),
    session('s4', 'cluster-ha'),
    session('s5', 'cluster-ha'),
    session('s6', 'dev-x'),
    session('s7', 'before'),
  ];
  const kept = prune(runs, sessions);
  assert.deepEqual(kept.runs, [runs[1], runs[2], runs[3], runs[6]]);
  assert.deepEqual(kept.sessions, [sessions[0], sessions[1], sessions[4]]);
  assert.deepEqual(prune(kept.runs, kept.sessions), kept, 'pruning what is pruned changes nothing');
});

test('pruneRecords rewrites the two files only when something goes', () => {
  const { root, results } = scratch();
  try {
    const runsFile = join(results, RUNS_FILE);
    const sessionsFile = join(results, SESSIONS_FILE);
    const runs = [run('s1', 'compliance', 'sluice'), run('s2', 'compliance', 'sluice')];
    writeLines(runsFile, runs);
    writeLines(sessionsFile, [session('s1'), session('s2')]);
    assert.deepEqual(pruneRecords(results), {
      runs: { before: 2, after: 1 },
      sessions: { before: 2, after: 1 },
    });
    assert.deepEqual(lines(runsFile), [runs[1]]);
    assert.deepEqual(lines(sessionsFile), [session('s2')]);
    const written = statSync(runsFile).mtimeMs;
    assert.deepEqual(pruneRecords(results).runs, { before: 1, after: 1 });
    assert.equal(statSync(runsFile).mtimeMs, written);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

test('the committed records are what BENCHMARKS.md shows, at most 1 MiB in all', () => {
  const runs = lines(join(RESULTS, RUNS_FILE));
  const sessions = lines(join(RESULTS, SESSIONS_FILE));
  assert.deepEqual(prune(runs, sessions), { runs, sessions }, 'npm run bench -- --report prunes them');
  const bytes = readdirSync(RESULTS, { withFileTypes: true })
    .filter((e) => e.isFile())
    .reduce((n, e) => n + statSync(join(RESULTS, e.name)).size, 0);
  assert.ok(bytes <= 2 ** 20, `bench/results holds ${bytes} bytes`);
});

test('BENCHMARKS.md is what the report renders from the committed records, and runs it does not show change nothing', () => {
  const { root, results, file } = scratch();
  try {
    const { runs, sessions } = readRecords(RESULTS);
    const rendered = renderReport(runs, sessions, results, file);
    assert.equal(rendered, readFileSync(BENCHMARKS, 'utf8'), 'npm run bench -- --report writes it');
    // Every run again in an older session, under a development label, and failed in a newer one.
    const older = runs.map((r) => ({ ...r, session: `old-${r.session}` }));
    const dev = runs.map((r) => ({ ...r, session: `dev-${r.session}`, label: 'dev-x' }));
    const failed = runs.map((r) => ({ ...r, session: `new-${r.session}`, error: 'boom' }));
    const moreSessions = [
      ...sessions.map((s) => ({ ...s, session: `old-${s.session}` })),
      ...sessions,
      ...sessions.map((s) => ({ ...s, session: `dev-${s.session}`, label: 'dev-x' })),
      ...sessions.map((s) => ({ ...s, session: `new-${s.session}` })),
    ];
    assert.equal(renderReport([...older, ...runs, ...dev, ...failed], moreSessions, results, file), rendered);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

test('a development report shows each label apart, the newest first, with its sessions’ commands', () => {
  const { root, results } = scratch();
  try {
    const dev = join(results, 'dev');
    mkdirSync(dev);
    assert.equal(writeDevReport(dev), false, 'no development runs: no report');
    const { runs, sessions } = readRecords(RESULTS);
    const as = (label: string) => ({
      runs: runs.map((r) => JSON.stringify({ ...r, session: `${label}-${r.session}`, label })),
      sessions: sessions.map((s) => JSON.stringify({ ...s, session: `${label}-${s.session}`, label })),
    });
    writeLines(join(dev, RUNS_FILE), [...as('dev-a').runs, ...as('ab-b').runs]);
    writeLines(join(dev, SESSIONS_FILE), [...as('dev-a').sessions, ...as('ab-b').sessions]);
    assert.equal(writeDevReport(dev), true);
    const report = readFileSync(join(dev, 'report.md'), 'utf8');
    const headings = report.split('\n').filter((l) => l.startsWith('## '));
    assert.deepEqual(headings, ['## Variant: ab-b', '## Variant: dev-a']);
    assert.ok(report.includes(`: \`${sessions[0]?.command}\``));
    assert.ok(report.includes('### throughput'));
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});
