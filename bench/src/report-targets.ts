/**
 * Each shape's targets (docs/performance.md, "Single box" and "Distributed"), each judged
 * from the medians of the report's cells, with the runs its figures come from (for the
 * sessions BENCHMARKS.md names beside them). A judge that both shapes' targets ask for takes
 * the target it judges and the ones it is compared with in the "measured" text.
 */

import { WARM_S } from './analyze.ts';
import { curveTargets } from './report-curve.ts';
import { type Cells, cellMedian, cellRuns, type RunRecord, SHORT_NAMES } from './report-rows.ts';
import type { TargetName } from './targets/target.ts';
import { ISOLATION } from './workload.ts';

interface Judgement {
  measured: string;
  met: boolean | null;
}

export interface IssueTarget {
  target: string;
  judge: (cells: Cells) => Judgement;
  /** The runs behind the measured text. */
  runs: (cells: Cells) => RunRecord[];
}

const f = (x: number | null, d = 2): string => (x === null ? '–' : String(Math.round(x * 10 ** d) / 10 ** d));
const s = (
  cells: Cells,
  scenario: string,
  get: (r: RunRecord) => number | null | undefined,
  target: TargetName = 'sluice',
) => cellMedian(cells, scenario, target, get);
const runs = (cells: Cells, scenario: string, target: TargetName = 'sluice'): RunRecord[] =>
  cells.get(`${scenario}/${target}`) ?? [];

/** `(BullMQ + RLF: 1.2 ms)`: the same median for the targets compared with. */
const others = (
  c: Cells,
  scenario: string,
  get: (r: RunRecord) => number | null | undefined,
  compared: TargetName[],
  digits = 2,
  unit = '',
): string =>
  `(${compared.map((t) => `${SHORT_NAMES[t]}: ${f(s(c, scenario, get, t), digits)}${unit}`).join('; ')})`;

function complianceWorst(target: TargetName, compared: TargetName[]): IssueTarget {
  return {
    target: 'compliance: worst sliding window ÷ limit ≤ 1.00 for every destination',
    runs: cellRuns('compliance', [target, ...compared]),
    judge: (c) => {
      const rs = runs(c, 'compliance', target);
      const worst = rs.length ? Math.max(...rs.map((r) => r.worstRatio)) : null;
      return {
        measured: `worst of ${rs.length} runs: ${f(worst)} ${others(c, 'compliance', (r) => r.worstRatio, compared)}`,
        met: worst === null ? null : worst <= 1,
      };
    },
  };
}

function complianceWall(target: TargetName, compared: TargetName[]): IssueTarget {
  return {
    target: 'compliance: wall time ≤ 1.05 × ideal',
    runs: cellRuns('compliance', [target, ...compared]),
    judge: (c) => {
      const v = s(c, 'compliance', (r) => r.wallRatio, target);
      return {
        measured: `${f(v)} × ${others(c, 'compliance', (r) => r.wallRatio, compared, 2, ' ×')}`,
        met: v === null ? null : v <= 1.05,
      };
    },
  };
}

function latencyP99(target: TargetName, compared: TargetName[], atMostMs: number): IssueTarget {
  return {
    target: `latency: p99 ≤ ${atMostMs} ms`,
    runs: cellRuns('latency', [target, ...compared]),
    judge: (c) => {
      const v = s(c, 'latency', (r) => r.latencyMs.p99, target);
      const warm = s(c, 'latency', (r) => r.latencyMs.p99Warm, target);
      const warmText =
        warm === null ? '' : `; events created ${WARM_S} s or more into the run: ${f(warm, 1)} ms`;
      return {
        measured: `${f(v, 1)} ms ${others(c, 'latency', (r) => r.latencyMs.p99, compared, 1, ' ms')}${warmText}`,
        met: v === null ? null : v <= atMostMs,
      };
    },
  };
}

function throughputAgainst(target: TargetName, baseline: TargetName, factor: number): IssueTarget {
  const name = baseline === 'ceiling' ? 'the ceiling' : SHORT_NAMES[baseline];
  return {
    target: `throughput: ≥ ${factor} × ${name}`,
    runs: cellRuns('throughput', [target, baseline]),
    judge: (c) => {
      const a = s(c, 'throughput', (r) => r.deliveriesPerS, target);
      const b = s(c, 'throughput', (r) => r.deliveriesPerS, baseline);
      const v = a !== null && b ? a / b : null;
      return {
        measured: `${f(a, 0)} vs ${f(b, 0)} deliveries/s = ${f(v)} ×`,
        met: v === null ? null : v >= factor,
      };
    },
  };
}

/** An isolation scenario's measured p99 beside its noise ≤ factor × its p99 alone + plusMs (medians). */
function besideAlone(
  target: TargetName,
  scenario: 'hanging-tenant' | 'busy-tenant',
  factor: number,
  plusMs: number,
  what: string,
): IssueTarget {
  return {
    target: `${scenario}: the quiet tenant's p99 beside ${what} ≤ ${factor} × its p99 alone + ${plusMs} ms`,
    runs: cellRuns(scenario, [target]),
    judge: (c) => {
      const alone = s(c, scenario, (r) => r.isolation?.alone?.p99Ms ?? null, target);
      const beside = s(c, scenario, (r) => r.isolation?.beside?.p99Ms ?? null, target);
      const bound = alone === null ? null : factor * alone + plusMs;
      return {
        measured: `${f(beside, 1)} ms beside, ${f(alone, 1)} ms alone (bound ${f(bound, 1)} ms)`,
        met: beside === null || bound === null ? null : beside <= bound,
      };
    },
  };
}

/** Both isolation targets of the tenant-share issue for one shape. */
const tenantTargets = (target: TargetName): IssueTarget[] => [
  besideAlone(target, 'hanging-tenant', 2, 250, "another tenant's 20 half-answering, hanging receivers"),
  besideAlone(target, 'busy-tenant', 1.5, 5, "another tenant's backlog draining"),
];

function noLoss(target: TargetName, which: string): IssueTarget {
  // Isolation runs end without waiting for their noise (a slow receiver, a backlog): not losses.
  const counted = (c: Cells): RunRecord[] =>
    [...c.entries()]
      .filter(([k]) => k.endsWith(`/${target}`) && !ISOLATION.some((s) => k.startsWith(`${s}/`)))
      .flatMap(([, v]) => v);
  return {
    target: `no loss, no duplicates anywhere (every ${which} run)`,
    runs: counted,
    judge: (c) => {
      const all = counted(c);
      const lost = all.reduce((a, r) => a + r.lost, 0);
      const dup = all.reduce((a, r) => a + r.duplicated + r.webhookIdMismatches, 0);
      return {
        measured: `${all.length} runs: ${lost} lost, ${dup} duplicated`,
        met: all.length === 0 ? null : lost === 0 && dup === 0,
      };
    },
  };
}

/** The single box's targets: against BullMQ + RLF and the ceiling. */
export const ISSUE_TARGETS: IssueTarget[] = [
  complianceWorst('sluice', ['bullmq-rlf']),
  complianceWall('sluice', ['bullmq-rlf']),
  latencyP99('sluice', ['bullmq-rlf'], 10),
  throughputAgainst('sluice', 'bullmq-rlf', 2),
  throughputAgainst('sluice', 'ceiling', 0.6),
  ...curveTargets('sluice'),
  {
    target: 'limit-change: in force within one tick (1 s)',
    runs: cellRuns('limit-change', ['sluice']),
    judge: (c) => {
      const low = s(c, 'limit-change', (r) => r.limitChange?.lowered.settleMsMax);
      const high = s(c, 'limit-change', (r) => r.limitChange?.raised.visibleMsMax);
      const worst = low === null || high === null ? null : Math.max(low, high);
      return {
        measured: `lowered: ${f(low, 0)} ms, raised: ${f(high, 0)} ms (worst change, median of runs)`,
        met: worst === null ? null : worst <= 1_000,
      };
    },
  },
  {
    target: 'soak: RSS growth ≤ 10 % from 100k to 1M deliveries',
    runs: cellRuns('soak', ['sluice']),
    judge: (c) => {
      const v = s(c, 'soak', (r) => r.soak?.rssGrowthPct);
      return {
        measured: v === null ? 'not run (opt-in: --scenarios soak)' : `${f(v, 1)} %`,
        met: v === null ? null : v <= 10,
      };
    },
  },
  ...tenantTargets('sluice'),
  noLoss('sluice', 'Sluice'),
];

/** The distributed shape's targets (API, one rate limiter, two delivery workers). */
export const ISSUE6_TARGETS: IssueTarget[] = [
  complianceWorst('sluice-distributed', ['sluice', 'bullmq-rlf']),
  complianceWall('sluice-distributed', ['sluice', 'bullmq-rlf']),
  throughputAgainst('sluice-distributed', 'bullmq-rlf', 1.5),
  latencyP99('sluice-distributed', ['sluice', 'bullmq-rlf'], 15),
  ...curveTargets('sluice-distributed'),
  ...tenantTargets('sluice-distributed'),
  noLoss('sluice-distributed', 'distributed'),
];
