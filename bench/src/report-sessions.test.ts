/** The sessions BENCHMARKS.md names beside its figures, over synthetic records. */

import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { MachineInfo } from './machine.ts';
import type { SessionRecord } from './records.ts';
import type { Cells, RunRecord } from './report-rows.ts';
import { numberSessions, scenarioSessions, sessionsSection, targetsTable } from './report-sessions.ts';
import type { IssueTarget } from './report-targets.ts';

const machine = (postgres: string): MachineInfo => ({
  cores: 2,
  cpuModel: 'AMD EPYC',
  memoryGiB: 24,
  kernel: '6.18',
  node: '24.21.0',
  redis: '7.0.15',
  postgres,
  libraries: { bullmq: '6.7.0' },
  sluiceCommit: null,
  sluiceDirty: null,
});
const session = (id: string, date: string, ref: string, postgres = '15.20'): SessionRecord => ({
  session: id,
  date,
  command: `npm run bench -- --session ${id}`,
  label: null,
  sluiceRef: ref,
  sluiceDirty: false,
  sluiceEnv: {},
  machine: machine(postgres),
});
const run = (id: string, scenario: string, target: string, stealPct = 0) =>
  ({
    session: id,
    scenario,
    target,
    machine: { busyPct: 50, stealPct },
    receiver: { nice: -10 },
  }) as RunRecord;

const sessions = [
  session('s0', '2026-11-20T01:00:00.000Z', 'aaaaaaa'),
  session('s1', '2026-11-24T16:45:58.729Z', 'bbbbbbb'),
  session('s2', '2026-11-26T08:10:17.821Z', 'ccccccc', '15.20, autovacuum off'),
  session('s3', '2026-11-27T02:21:06.430Z', 'ddddddd', '15.20, autovacuum off'),
];
const cells: Cells = new Map([
  ['compliance/sluice', [run('s1', 'compliance', 'sluice', 0.2), run('s1', 'compliance', 'sluice', 1.3)]],
  ['compliance/ceiling', [run('s2', 'compliance', 'ceiling')]],
  ['latency/sluice', [run('s3', 'latency', 'sluice')]],
]);
const shown = [...cells.values()].flat();
const numbered = numberSessions(sessions, shown);
const target = (name: string, runs: (c: Cells) => RunRecord[]): IssueTarget => ({
  target: name,
  runs,
  judge: (c) => ({ measured: `${runs(c).length} runs`, met: runs(c).length > 0 ? true : null }),
});

test('only the sessions of runs shown are numbered, in the order they ran', () => {
  assert.deepEqual(
    [...numbered.entries()].map(([id, s]) => [id, s.n]),
    [
      ['s1', 1],
      ['s2', 2],
      ['s3', 3],
    ],
  );
});

test('each target names the sessions of its figure: its date and commit, or the span of several', () => {
  const table = targetsTable(
    cells,
    [
      target('one', (c) => c.get('compliance/sluice') ?? []),
      target('two', (c) => [...(c.get('compliance/sluice') ?? []), ...(c.get('compliance/ceiling') ?? [])]),
      target('all', () => shown),
      target('none', () => []),
    ],
    numbered,
  );
  assert.deepEqual(table.slice(2), [
    '| one | 2 runs | yes | #1, 2026-11-24, `bbbbbbb` |',
    '| two | 3 runs | yes | #1, 2026-11-24, `bbbbbbb`; #2, 2026-11-26, `ccccccc` |',
    '| all | 4 runs | yes | #1, #2, #3 (2026-11-24 to 2026-11-27) |',
    '| none | 0 runs | not run | – |',
  ]);
});

test("a scenario's tables say which session each column is from", () => {
  assert.equal(scenarioSessions(cells, ['latency'], numbered), 'Session #3 (see [Sessions](#sessions)).');
  assert.equal(
    scenarioSessions(cells, ['compliance'], numbered),
    'Sessions (see [Sessions](#sessions)): #1 (single box); #2 (ceiling).',
  );
});

test('the sessions table gives each date, commit, machine, steal and command; software differing by session says which', () => {
  const out = sessionsSection(numbered, shown, true);
  assert.equal(
    out.find((l) => l.startsWith('| 1 |')),
    '| 1 | 2026-11-24 16:45 | `bbbbbbb` | 2 cores, AMD EPYC, 24 GiB RAM, Linux 6.18 | 0.8, 1.3 | `npm run bench -- --session s1` |',
  );
  assert.ok(out.some((l) => l.startsWith('| 3 | 2026-11-27 02:21 | `ddddddd` |')));
  assert.ok(!out.some((l) => l.includes('aaaaaaa')), 'a session no run shown comes from is left out');
  assert.ok(
    out.includes(
      '- **Node** 24.21.0; **Redis** 7.0.15; **Postgres** 15.20 (#1); 15.20, autovacuum off (#2, #3)',
    ),
  );
  assert.deepEqual(sessionsSection(new Map(), [], true), []);
});
