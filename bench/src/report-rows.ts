/**
 * What BENCHMARKS.md shows: the targets' names, the rows of the scenario tables (each a
 * getter over one run record) and which runs make up each cell (report-targets.ts judges
 * each shape's targets from them).
 */

import { type Analysis, WARM_S } from './analyze.ts';
import type { Budget } from './budget.ts';
import { median } from './common.ts';
import type { IsolationResult } from './isolation.ts';
import type { LimitChangeStats } from './limit-change.ts';
import type { ProcessCost } from './procstat.ts';
import type { TargetName } from './targets/target.ts';

/** Column headings. */
export const NAMES: Record<TargetName, string> = {
  sluice: 'Sluice single box',
  'sluice-distributed': 'Sluice distributed',
  'sluice-cluster': 'Sluice distributed, Redis Cluster',
  'bullmq-rlf': 'BullMQ + RLF',
  ceiling: 'ceiling',
};

/** In ratio headings and in the targets' "measured" text. */
export const SHORT_NAMES: Record<TargetName, string> = {
  sluice: 'single box',
  'sluice-distributed': 'distributed',
  'sluice-cluster': 'cluster',
  'bullmq-rlf': 'BullMQ + RLF',
  ceiling: 'ceiling',
};

/** The distributed shape's services, by the names its records use. */
const SERVICES = ['api', 'rate-limiter', 'worker-1', 'worker-2'];

type Cost = Pick<ProcessCost, 'cpuS' | 'cpuPct' | 'maxCpuPct' | 'peakRssMb' | 'hwmMb'>;
interface Eld {
  p99Median: number | null;
  p99Worst: number | null;
}

export interface RunRecord {
  session: string;
  label?: string | null;
  scenario: string;
  target: string;
  rep: number;
  error?: string;
  expected: number;
  requests: number;
  delivered: number;
  lost: number;
  duplicated: number;
  non2xx: number;
  status429: number;
  webhookIdMismatches: number;
  wallS: number | null;
  idealS: number | null;
  wallRatio: number | null;
  deliveriesPerS: number | null;
  worstRatio: number;
  destinationsOver: number;
  refused: number;
  latencyMs: {
    p50: number | null;
    p90: number | null;
    p99: number | null;
    max: number | null;
    /** Absent in runs recorded before it was measured. */
    p99Warm?: number | null;
    /** Absent in runs recorded before it was measured. */
    p99FirstSecond?: number | null;
  };
  /** Absent in runs recorded before it was measured. */
  backlog?: Analysis['backlog'];
  ingest: { t0: number; doneAt: number } | null;
  setup: { setupS?: number };
  systemCpuS: number | null;
  systemCpuPct: number | null;
  processes: Record<string, Cost>;
  machine: { busyPct: number; stealPct: number } | null;
  /** By probed process: `sluice`, `driver`, and the distributed shape's services. */
  eventLoopDelayMs: Record<string, Eld | null | undefined>;
  receiver: { nice: number | null; cpuS: number | null };
  tickLag: {
    ticks: number;
    /** Absent in runs recorded before it was measured. */
    p50AtMostMs?: number | null;
    p99AtMostMs: number | null;
    shareWithin20ms: number | null;
    meanMs: number | null;
  } | null;
  idle?: { systemCpuPct: number | null; ticks: number | null };
  /** The cost curve: the same window before the run's first event (the processes' own floor). */
  floor?: { systemCpuPct: number | null; ticks: number | null };
  /** cost-curve: the run's destinations and events a second, and bytes held before and after. */
  curve?: { size: number; rate: number };
  storage?: { start?: Record<string, number> | null; done?: Record<string, number> | null };
  limitChange: LimitChangeStats | null;
  soak?: {
    rssAt100kMb: number | null;
    rssAtEndMb: number | null;
    rssGrowthPct: number | null;
    eldP99WorstMs: number | null;
    series: { s: number; delivered: number; rssMb: number; heapMb: number; eldP99: number }[];
  };
  plot?: { series: Record<string, [number, number][]>; limits: Record<string, number> };
  /** Isolation scenarios: the measured destinations alone and beside the noise. */
  isolation?: IsolationResult;
  /** What the run asked of Redis and Postgres (budget.ts); absent before it was counted. */
  budget?: Budget;
}

export interface Row {
  label: string;
  get: (r: RunRecord) => number | null | undefined;
  digits?: number;
  /** Only in these scenarios' tables. */
  scenarios?: string[];
  /** No ratio columns (counts where a ratio means nothing). */
  ratio?: false;
}

/** The process that does the target's work; of the distributed shape, its busiest service. */
const distributed = (r: RunRecord): boolean =>
  r.target === 'sluice-distributed' || r.target === 'sluice-cluster';
const mainName = (r: RunRecord): string =>
  distributed(r)
    ? SERVICES.reduce((a, b) => ((r.processes[b]?.cpuS ?? -1) > (r.processes[a]?.cpuS ?? -1) ? b : a))
    : r.target;
const main = (r: RunRecord): Cost | undefined => r.processes[mainName(r)];
const eld = (r: RunRecord): Eld | null | undefined =>
  r.target === 'sluice' || distributed(r) ? r.eventLoopDelayMs[mainName(r)] : r.eventLoopDelayMs.driver;
const cpuOf = (r: RunRecord, names: string[]): number | null => {
  const costs = names.map((n) => r.processes[n]?.cpuS).filter((x): x is number => typeof x === 'number');
  return costs.length > 0 ? costs.reduce((a, b) => a + b, 0) : null;
};
const CAPACITY = ['capacity', 'capacity-adaptive'];
const ALL_BUT_SOAK = ['compliance', 'latency', 'throughput', 'limit-change', 'failures', ...CAPACITY];

export const ROWS: Row[] = [
  { label: 'events delivered', get: (r) => r.delivered, ratio: false },
  { label: 'lost (never answered 2xx)', get: (r) => r.lost, ratio: false },
  { label: 'duplicated (2xx beyond the first)', get: (r) => r.duplicated, ratio: false },
  { label: 'requests received (any status)', get: (r) => r.requests, ratio: false },
  { label: 'non-2xx answers', get: (r) => r.non2xx, scenarios: ['failures'], ratio: false },
  {
    label: '429 answers (receiver’s own 5/s limit)',
    get: (r) => r.status429,
    scenarios: ['failures'],
    ratio: false,
  },
  {
    label: '**requests refused by the receiver (429, its unannounced 15/s)**',
    get: (r) => r.status429,
    scenarios: CAPACITY,
    ratio: false,
  },
  { label: '**worst sliding 1 s window ÷ limit**', get: (r) => r.worstRatio },
  { label: 'destinations over their limit', get: (r) => r.destinationsOver, ratio: false },
  { label: 'requests a strict receiver would refuse', get: (r) => r.refused, ratio: false },
  { label: 'wall time s (first event created → last first 2xx)', get: (r) => r.wallS },
  { label: 'ideal wall time s', get: (r) => r.idealS, ratio: false },
  { label: '**wall ÷ ideal**', get: (r) => r.wallRatio },
  { label: '**deliveries / s**', get: (r) => r.deliveriesPerS, digits: 0 },
  { label: 'latency p50 ms (created → first 2xx)', get: (r) => r.latencyMs.p50 },
  { label: 'latency p90 ms', get: (r) => r.latencyMs.p90 },
  { label: '**latency p99 ms**', get: (r) => r.latencyMs.p99 },
  { label: 'latency max ms', get: (r) => r.latencyMs.max },
  {
    label: `latency p99 ms of events created ${WARM_S} s or more after the first (warm)`,
    get: (r) => r.latencyMs.p99Warm,
    scenarios: ['latency'],
  },
  {
    label: 'latency p99 ms of events created in the first second (cold)',
    get: (r) => r.latencyMs.p99FirstSecond,
    scenarios: ['latency'],
  },
  {
    label: 'time to hand every event over s',
    get: (r) => (r.ingest ? (r.ingest.doneAt - r.ingest.t0) / 1_000 : null),
  },
  {
    label: "a destination's first 2xx, ms after the first event (median)",
    get: (r) => r.backlog?.firstArrivalMs.p50,
    scenarios: ['compliance'],
  },
  {
    label: 'window cycle ms: the i-th first 2xx of a run to the i-th of the next (median; ideal 1,000)',
    get: (r) => r.backlog?.cycleMs.p50,
    scenarios: ['compliance'],
  },
  {
    label: 'window cycle ms, p90',
    get: (r) => r.backlog?.cycleMs.p90,
    scenarios: ['compliance'],
  },
  {
    label: 'tick lag p99 ms (≤ histogram bucket)',
    get: (r) => r.tickLag?.p99AtMostMs,
    scenarios: ALL_BUT_SOAK,
  },
  {
    label: 'ticks at most 20 ms late (share)',
    get: (r) => r.tickLag?.shareWithin20ms,
    digits: 3,
    scenarios: ALL_BUT_SOAK,
  },
  {
    label: 'ticks per delivery',
    get: (r) => (r.tickLag && r.delivered ? r.tickLag.ticks / r.delivered : null),
    scenarios: ALL_BUT_SOAK,
  },
  {
    label: 'lowered: time until every window keeps the new limit, worst ms',
    get: (r) => r.limitChange?.lowered.settleMsMax,
    scenarios: ['limit-change'],
  },
  {
    label: 'lowered: median ms',
    get: (r) => r.limitChange?.lowered.settleMsMedian,
    scenarios: ['limit-change'],
  },
  {
    label: 'lowered: worst window ÷ new limit, from one tick after',
    get: (r) => r.limitChange?.lowered.afterTickRatioMax,
    scenarios: ['limit-change'],
  },
  {
    label: 'raised: time until more than the old limit arrives, median ms',
    get: (r) => r.limitChange?.raised.visibleMsMedian,
    scenarios: ['limit-change'],
  },
  { label: 'raised: worst ms', get: (r) => r.limitChange?.raised.visibleMsMax, scenarios: ['limit-change'] },
  {
    label: 'raised: time until 90 % of the new limit arrives, median ms',
    get: (r) => r.limitChange?.raised.fullMsMedian,
    scenarios: ['limit-change'],
  },
  {
    label:
      'system CPU s (single box; distributed: its 4 processes + Postgres backends + Redis; BullMQ process + Redis; ceiling)',
    get: (r) => r.systemCpuS,
  },
  { label: 'system CPU, % of one core', get: (r) => r.systemCpuPct },
  {
    label: 'main process (distributed: busiest service): most CPU in any 1 s, % of one core',
    get: (r) => main(r)?.maxCpuPct,
  },
  { label: 'main process: peak RSS MB (VmHWM)', get: (r) => main(r)?.hwmMb },
  { label: 'redis-server CPU s', get: (r) => r.processes['redis-server']?.cpuS },
  { label: 'distributed: API CPU s', get: (r) => cpuOf(r, ['api']), ratio: false },
  { label: 'distributed: rate limiter CPU s', get: (r) => cpuOf(r, ['rate-limiter']), ratio: false },
  {
    label: 'distributed: delivery workers CPU s (both)',
    get: (r) => cpuOf(r, ['worker-1', 'worker-2']),
    ratio: false,
  },
  {
    label: 'distributed: Postgres backends CPU s (the run’s database)',
    get: (r) => cpuOf(r, ['postgres']),
    ratio: false,
  },
  {
    label: 'distributed: rate limiter event-loop delay p99 ms, worst second',
    get: (r) => r.eventLoopDelayMs['rate-limiter']?.p99Worst,
    ratio: false,
  },
  { label: 'main process event-loop delay p99 ms, median second', get: (r) => eld(r)?.p99Median },
  { label: 'main process event-loop delay p99 ms, worst second', get: (r) => eld(r)?.p99Worst },
  { label: 'receiver CPU s', get: (r) => r.receiver.cpuS },
  { label: 'soak: RSS MB at 100k deliveries', get: (r) => r.soak?.rssAt100kMb, scenarios: ['soak'] },
  { label: 'soak: RSS MB at the end', get: (r) => r.soak?.rssAtEndMb, scenarios: ['soak'] },
  { label: '**soak: RSS growth %**', get: (r) => r.soak?.rssGrowthPct, scenarios: ['soak'] },
  {
    label: 'soak: event-loop delay p99, worst second ms',
    get: (r) => r.soak?.eldP99WorstMs,
    scenarios: ['soak'],
  },
  { label: 'CPU steal % (whole machine)', get: (r) => r.machine?.stealPct, digits: 1, ratio: false },
];

export type Cells = Map<string, RunRecord[]>;
const key = (scenario: string, target: string): string => `${scenario}/${target}`;

/** The runs of the latest session that ran each cell (unlabelled runs without an error). */
export function selectCells(runs: RunRecord[], label: string | null = null): Cells {
  const cells: Cells = new Map();
  const latest = new Map<string, string>();
  for (const r of runs) {
    if (r.error !== undefined || (r.label ?? null) !== label) continue;
    latest.set(key(r.scenario, r.target), r.session);
  }
  for (const r of runs) {
    const k = key(r.scenario, r.target);
    if (r.error !== undefined || (r.label ?? null) !== label || latest.get(k) !== r.session) continue;
    cells.set(k, [...(cells.get(k) ?? []), r]);
  }
  return cells;
}

export function cellMedian(
  cells: Cells,
  scenario: string,
  target: string,
  get: (r: RunRecord) => number | null | undefined,
): number | null {
  const values = (cells.get(key(scenario, target)) ?? [])
    .map(get)
    .filter((v): v is number => typeof v === 'number' && Number.isFinite(v));
  return median(values);
}

/** The runs of a scenario's cells on these targets. */
export const cellRuns =
  (scenario: string, targets: readonly string[]) =>
  (cells: Cells): RunRecord[] =>
    targets.flatMap((t) => cells.get(key(scenario, t)) ?? []);
