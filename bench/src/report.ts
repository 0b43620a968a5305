/**
 * BENCHMARKS.md and its plots, generated from bench/results/{runs,sessions}.ndjson — never
 * typed by hand. For each scenario × target it takes the runs of the latest session that
 * ran that cell without a `--label` and reports their median; each reported variant
 * (records.ts `VARIANTS`) the same, apart. Before it reads them, it prunes the two files to
 * those runs and their sessions (records.ts). Development and A/B sessions (any other label)
 * are recorded in results/dev/ and reported there (`writeDevReport`).
 */

import { writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { round } from './common.ts';
import { COLORS, type Panel, svg } from './plot.ts';
import {
  type Pruned,
  pruneRecords,
  RUNS_FILE,
  readRecords,
  reportedCells,
  type SessionRecord,
  VARIANTS,
} from './records.ts';
import { BUDGET_TARGETS, budgetSection } from './report-budget.ts';
import { CLUSTER_TARGETS } from './report-cluster.ts';
import { curveTable } from './report-curve.ts';
import { isolationTable } from './report-isolation.ts';
import {
  type Cells,
  cellMedian,
  NAMES,
  ROWS,
  type RunRecord,
  SHORT_NAMES,
  selectCells,
} from './report-rows.ts';
import { numberSessions, scenarioSessions, sessionsSection, targetsTable } from './report-sessions.ts';
import { ISSUE_TARGETS, ISSUE6_TARGETS } from './report-targets.ts';
import { TARGETS, type TargetName } from './targets/target.ts';
import { ISOLATION, SCENARIOS } from './workload.ts';

/** The ratio columns: each Sluice shape against the baseline and the ceiling. */
const RATIOS: [TargetName, TargetName][] = [
  ['sluice', 'bullmq-rlf'],
  ['sluice', 'ceiling'],
  ['sluice-distributed', 'bullmq-rlf'],
  ['sluice-distributed', 'ceiling'],
];

const key = (scenario: string, target: string): string => `${scenario}/${target}`;

const fmt = (x: number | null, digits = 2): string => {
  if (x === null) return '–';
  if (x === Number.POSITIVE_INFINITY) return '∞';
  const r = round(x, Math.abs(x) >= 100 ? 0 : digits) as number;
  return r.toLocaleString('en-US', { maximumFractionDigits: digits });
};

const ratio = (a: number | null, b: number | null): string =>
  a === null || b === null || b === 0 ? '–' : `${fmt(a / b, 2)}×`;

/**
 * One column per target that ran the scenario, then the ratios between those present; an
 * isolation scenario and the cost curve have their own tables (report-isolation.ts,
 * report-curve.ts).
 */
function scenarioTable(cells: Cells, scenario: string): string[] {
  if (ISOLATION.some((s) => s === scenario)) return isolationTable(cells, scenario);
  if (scenario === 'cost-curve') return curveTable(cells);
  const rows = ROWS.filter((row) => row.scenarios === undefined || row.scenarios.includes(scenario));
  const targets = TARGETS.filter((t) => cells.has(key(scenario, t)));
  const ratios = RATIOS.filter(([a, b]) => targets.includes(a) && targets.includes(b));
  const headings = [
    ...targets.map((t) => `${NAMES[t]} (n=${(cells.get(key(scenario, t)) ?? []).length})`),
    ...ratios.map(([a, b]) => `${SHORT_NAMES[a]} ÷ ${SHORT_NAMES[b]}`),
  ];
  const out = [
    `| metric (median of runs) | ${headings.join(' | ')} |`,
    `|---|${'---|'.repeat(headings.length)}`,
  ];
  for (const row of rows) {
    const v = targets.map((t) => cellMedian(cells, scenario, t, row.get));
    if (v.every((x) => x === null)) continue;
    const of = (t: TargetName): number | null => v[targets.indexOf(t)] ?? null;
    const r = ratios.map(([a, b]) => (row.ratio === false ? '' : ratio(of(a), of(b))));
    out.push(`| ${row.label} | ${[...v.map((x) => fmt(x, row.digits ?? 2)), ...r].join(' | ')} |`);
  }
  return out;
}

function plotCompliance(cells: Cells, file: string): boolean {
  const panels: Panel[] = [];
  for (const target of TARGETS) {
    const run = (cells.get(key('compliance', target)) ?? []).find((r) => r.plot !== undefined);
    if (!run?.plot) continue;
    const lines = Object.entries(run.plot.series).map(([dest, points], i) => ({
      label: `${dest} (limit ${run.plot?.limits[dest]}/s)`,
      color: COLORS[i % COLORS.length] as string,
      points,
      reference: run.plot?.limits[dest],
    }));
    panels.push({
      title: `${NAMES[target]} — compliance, run ${run.rep} of session ${run.session}`,
      lines,
      xLabel: 'seconds since the first event was created',
      yLabel: 'requests in the trailing second',
    });
  }
  if (panels.length === 0) return false;
  writeFileSync(
    file,
    svg(
      panels,
      'Requests arriving at the receiver in the trailing 1 s window (sampled every 100 ms); dashed: each destination’s limit.',
    ),
  );
  return true;
}

function plotSoak(cells: Cells, file: string): boolean {
  const panels: Panel[] = [];
  for (const target of TARGETS) {
    const run = (cells.get(key('soak', target)) ?? [])[0];
    if (!run?.soak) continue;
    const s = run.soak.series;
    panels.push({
      title: `${NAMES[target]} — soak: RSS and event-loop delay against deliveries`,
      xLabel: 'deliveries (thousands)',
      yLabel: 'MB / ms',
      lines: [
        {
          label: 'RSS (MB)',
          color: COLORS[0] as string,
          points: s.map((x) => [x.delivered / 1_000, x.rssMb]),
        },
        {
          label: 'event-loop delay p99 (ms)',
          color: COLORS[1] as string,
          points: s.map((x) => [x.delivered / 1_000, x.eldP99]),
        },
      ],
    });
  }
  if (panels.length === 0) return false;
  writeFileSync(file, svg(panels, 'Sampled once a second by the probe preloaded into the process.'));
  return true;
}

/** BENCHMARKS.md's text from the records (and the plots, written into `resultsDir`). */
export function renderReport(
  runs: RunRecord[],
  sessions: SessionRecord[],
  resultsDir: string,
  file: string,
): string {
  const { cells, variants } = reportedCells(runs);
  const shown = [cells, ...variants.map(([, v]) => v)].flatMap((c) => [...c.values()].flat());
  const numbered = numberSessions(sessions, shown);
  const distributed = [...cells.keys()].some((k) => k.endsWith('/sluice-distributed'));
  const rel = (p: string): string => relative(join(file, '..'), p);
  const out: string[] = [];
  out.push('# Benchmarks', '');
  out.push(
    `Generated by \`npm run bench\` (\`bench/src/report.ts\`) from \`${rel(join(resultsDir, RUNS_FILE))}\`, which holds only the runs shown here: for each scenario × target, those of the latest session that ran it. Nothing here is typed by hand; earlier sessions are in git's history (\`git log -p BENCHMARKS.md\`). What is measured and how: [\`bench/README.md\`](bench/README.md). What limits each number short of its target, with the profiles and the plan: [\`docs/performance.md\`](docs/performance.md).`,
    '',
    '## Targets',
    '',
    'The targets of [`docs/performance.md`](docs/performance.md) and the latest figures against them. The session column names the [sessions](#sessions) they were measured in: their date, machine and command.',
    '',
    '### Single box',
    '',
    ...targetsTable(cells, ISSUE_TARGETS, numbered),
    '',
    '### Distributed',
    '',
    ...targetsTable(cells, [...ISSUE6_TARGETS, ...CLUSTER_TARGETS], numbered),
    '',
    ...sessionsSection(numbered, shown, distributed),
    ...budgetSection(
      cells,
      '##',
      scenarioSessions(cells, ['latency', 'throughput'], numbered, BUDGET_TARGETS),
    ),
  );
  const compliancePlot = plotCompliance(cells, join(resultsDir, 'compliance.svg'));
  const soakPlot = plotSoak(cells, join(resultsDir, 'soak.svg'));
  for (const scenario of SCENARIOS) {
    if (!TARGETS.some((t) => cells.has(key(scenario, t)))) continue;
    out.push(`## ${scenario}`, '', scenarioSessions(cells, [scenario], numbered), '');
    out.push(...scenarioTable(cells, scenario), '');
    if (scenario === 'compliance' && compliancePlot) {
      out.push(
        `Sends per second of one destination per limit against its limit: [${rel(join(resultsDir, 'compliance.svg'))}](${rel(join(resultsDir, 'compliance.svg'))})`,
        '',
      );
      out.push(`![compliance](${rel(join(resultsDir, 'compliance.svg'))})`, '');
    }
    if (scenario === 'soak' && soakPlot) out.push(`![soak](${rel(join(resultsDir, 'soak.svg'))})`, '');
  }
  for (const [label, variant] of variants)
    out.push(
      ...variantSection(label, variant, (scenarios) => [
        VARIANTS[label] ?? '',
        '',
        scenarioSessions(variant, scenarios, numbered),
        '',
      ]),
    );
  return `${out.join('\n')}\n`;
}

/**
 * A variant's tables, as BENCHMARKS.md and the development report show them; `about` gives
 * the lines under its heading for the scenarios it ran.
 */
function variantSection(label: string, variant: Cells, about: (scenarios: string[]) => string[]): string[] {
  const ran = SCENARIOS.filter((scenario) => TARGETS.some((t) => variant.has(key(scenario, t))));
  const out = [`## Variant: ${label}`, '', ...about(ran), ...budgetSection(variant, '###')];
  for (const scenario of ran) out.push(`### ${scenario}`, '', ...scenarioTable(variant, scenario), '');
  return out;
}

/** A development report's sessions: date, commit, machine and command of each. */
const listSessions = (variant: Cells, sessions: SessionRecord[]) => (): string[] => {
  const ran = new Set([...variant.values()].flat().map((r) => r.session));
  const out = sessions
    .filter((s) => ran.has(s.session))
    .map(
      (s) =>
        `- ${s.date}, Sluice \`${s.sluiceRef}\`${s.sluiceDirty ? ' + uncommitted changes' : ''}, ${s.machine.cores} cores ${s.machine.cpuModel}: \`${s.command}\``,
    );
  return out.length > 0 ? [...out, ''] : [];
};

/** Prunes the committed records to what the report shows, then writes BENCHMARKS.md from them. */
export function writeReport(resultsDir: string, file: string): Pruned {
  const pruned = pruneRecords(resultsDir);
  const { runs, sessions } = readRecords(resultsDir);
  writeFileSync(file, renderReport(runs, sessions, resultsDir, file));
  return pruned;
}

/**
 * results/dev/report.md: each development or A/B label's tables (for each scenario × target,
 * its latest session's runs), newest label first. False when there are no such runs.
 */
export function writeDevReport(devDir: string): boolean {
  const { runs, sessions } = readRecords(devDir);
  const labels = [...new Set(runs.map((r) => r.label).filter((l): l is string => typeof l === 'string'))];
  if (labels.length === 0) return false;
  const out = [
    '# Development and A/B runs',
    '',
    'Generated by `npm run bench` from `runs.ndjson` here (ignored by git); never part of BENCHMARKS.md.',
    '',
  ];
  for (const label of labels.reverse()) {
    const cells = selectCells(runs, label);
    out.push(...variantSection(label, cells, listSessions(cells, sessions)));
  }
  writeFileSync(join(devDir, 'report.md'), `${out.join('\n')}\n`);
  return true;
}
