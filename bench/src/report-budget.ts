/**
 * BENCHMARKS.md's "Budget per delivery": what one delivery costs each process and asks of
 * Redis and Postgres, at light load (the latency scenario) and at full load (throughput),
 * per target — the numbers docs/performance.md's "The distributed delivery's budget" is
 * written against.
 * Every value is a run's total ÷ its deliveries, the median of the runs. CPU is over the
 * delivery window (run.ts); commands and statements over the run's `budget` window
 * (budget.ts), both counted by the processes that send them (calls-probe.ts) and by the
 * servers (INFO commandstats of the bench's own redis-server, the database's pg_stat_database).
 */

import type { Counts } from './budget.ts';
import { type Cells, cellMedian, NAMES, type RunRecord } from './report-rows.ts';
import type { TargetName } from './targets/target.ts';

const LOADS: [string, string][] = [
  ['latency', 'light load'],
  ['throughput', 'full load'],
];
export const BUDGET_TARGETS: TargetName[] = ['sluice-distributed', 'sluice-cluster', 'bullmq-rlf', 'sluice'];
/** The processes that send commands and statements, as the tables group them. */
const GROUPS: [string, string[]][] = [
  ['API', ['api']],
  ['rate limiter', ['rate-limiter']],
  ['workers', ['worker-1', 'worker-2']],
  ['BullMQ + RLF process', ['bullmq-rlf']],
];
const TOP = 20;

interface Column {
  scenario: string;
  target: TargetName;
  heading: string;
}

type Get = (r: RunRecord) => number | null | undefined;

const sum = (counts: Counts | undefined): number => Object.values(counts ?? {}).reduce((a, b) => a + b, 0);
const perDelivery =
  (get: (r: RunRecord) => number | null | undefined, scale = 1): Get =>
  (r) => {
    const x = get(r);
    return typeof x === 'number' && r.delivered > 0 ? (scale * x) / r.delivered : null;
  };
const cpu = (names: string[]): Get =>
  perDelivery((r) => {
    const costs = names.map((n) => r.processes[n]?.cpuS).filter((x): x is number => typeof x === 'number');
    return costs.length > 0 ? costs.reduce((a, b) => a + b, 0) : null;
  }, 1e6);
/** Commands (`redis`) or statements (`pg`) the processes sent; null without a count. */
const sent = (kind: 'redis' | 'pg', names: string[] | null, keep: (key: string) => boolean = () => true) =>
  perDelivery((r) => {
    const processes = r.budget?.processes;
    if (!processes) return null;
    const counted = Object.entries(processes).filter(([n]) => names === null || names.includes(n));
    if (counted.length === 0) return null;
    return counted.reduce(
      (n, [, c]) => n + Object.entries(c[kind]).reduce((m, [k, x]) => m + (keep(k) ? x : 0), 0),
      0,
    );
  });
const isScript = (key: string): boolean => key.startsWith('script ') || key === 'evalsha' || key === 'eval';
const pgServer = (counter: string): Get =>
  perDelivery((r) => (r.budget?.postgresServer ? (r.budget.postgresServer[counter] ?? 0) : null));

const ROWS: { label: string; get: Get; digits: number }[] = [
  { label: '**CPU µs**: API', get: cpu(['api']), digits: 0 },
  { label: 'CPU µs: rate limiter', get: cpu(['rate-limiter']), digits: 0 },
  { label: 'CPU µs: delivery workers (both)', get: cpu(['worker-1', 'worker-2']), digits: 0 },
  { label: 'CPU µs: Postgres backends (the run’s database)', get: cpu(['postgres']), digits: 0 },
  { label: 'CPU µs: redis-server (a cluster: every node)', get: cpu(['redis-server']), digits: 0 },
  { label: 'CPU µs: of them the cluster’s masters', get: cpu(['redis-masters']), digits: 0 },
  { label: 'CPU µs: of them the cluster’s replicas', get: cpu(['redis-replicas']), digits: 0 },
  { label: 'CPU µs: BullMQ + RLF process (producer and worker)', get: cpu(['bullmq-rlf']), digits: 0 },
  { label: 'CPU µs: single box process', get: cpu(['sluice']), digits: 0 },
  {
    label: '**CPU µs: the system** (the processes above)',
    get: perDelivery((r) => r.systemCpuS, 1e6),
    digits: 0,
  },
  {
    label: '**Redis commands sent** (every process; a script call is one)',
    get: sent('redis', null),
    digits: 2,
  },
  ...GROUPS.map(([label, names]) => ({
    label: `Redis commands sent: ${label}`,
    get: sent('redis', names),
    digits: 2,
  })),
  { label: 'of them script calls (EVALSHA)', get: sent('redis', null, isScript), digits: 2 },
  {
    label: 'Redis commands run by redis-server (INFO commandstats; a script’s own commands counted too)',
    get: perDelivery((r) => (r.budget?.redisServer ? sum(r.budget.redisServer) : null)),
    digits: 2,
  },
  {
    label: '**Postgres statements sent** (every process; BEGIN, COMMIT counted)',
    get: sent('pg', null),
    digits: 2,
  },
  ...GROUPS.slice(0, 3).map(([label, names]) => ({
    label: `Postgres statements sent: ${label}`,
    get: sent('pg', names),
    digits: 2,
  })),
  { label: 'Postgres transactions committed (pg_stat_database)', get: pgServer('xact_commit'), digits: 2 },
  { label: 'Postgres rows inserted', get: pgServer('tup_inserted'), digits: 2 },
  { label: 'Postgres rows updated', get: pgServer('tup_updated'), digits: 2 },
  { label: 'Postgres rows deleted', get: pgServer('tup_deleted'), digits: 2 },
  { label: 'Postgres rows fetched (by index)', get: pgServer('tup_fetched'), digits: 2 },
];

const fmt = (x: number | null, digits: number): string =>
  x === null ? '–' : x.toLocaleString('en-US', { maximumFractionDigits: Math.abs(x) >= 100 ? 0 : digits });

function columnsOf(cells: Cells): Column[] {
  const out: Column[] = [];
  for (const [scenario, load] of LOADS)
    for (const target of BUDGET_TARGETS) {
      const runs = cells.get(`${scenario}/${target}`);
      if (runs) out.push({ scenario, target, heading: `${NAMES[target]}, ${load} (n=${runs.length})` });
    }
  return out;
}

function table(
  label: string,
  columns: Column[],
  rows: { label: string; get: Get; digits: number }[],
  cells: Cells,
) {
  const out = [
    `| ${label} | ${columns.map((c) => c.heading).join(' | ')} |`,
    `|---|${'---|'.repeat(columns.length)}`,
  ];
  for (const row of rows) {
    const v = columns.map((c) => cellMedian(cells, c.scenario, c.target, row.get));
    if (v.every((x) => x === null)) continue;
    out.push(`| ${row.label} | ${v.map((x) => fmt(x, row.digits)).join(' | ')} |`);
  }
  return out;
}

/** The biggest entries (`<process> · <command or statement>`) per delivery, over every column. */
function topRows(kind: 'redis' | 'pg', columns: Column[], cells: Cells) {
  const keyed = (r: RunRecord): Counts => {
    const out: Counts = {};
    for (const [group, names] of GROUPS)
      for (const name of names)
        for (const [k, n] of Object.entries(r.budget?.processes[name]?.[kind] ?? {})) {
          const key = `${group} · ${kind === 'pg' ? `\`${k.replaceAll('|', '\\|')}\`` : k}`;
          out[key] = (out[key] ?? 0) + n;
        }
    return out;
  };
  const biggest = new Map<string, number>();
  for (const c of columns)
    for (const r of cells.get(`${c.scenario}/${c.target}`) ?? [])
      for (const [k, n] of Object.entries(keyed(r)))
        biggest.set(k, Math.max(biggest.get(k) ?? 0, r.delivered > 0 ? n / r.delivered : 0));
  return [...biggest.entries()]
    .filter(([, n]) => n >= 0.005)
    .sort((a, b) => b[1] - a[1])
    .slice(0, TOP)
    .map(([key]) => ({ label: key, get: perDelivery((r) => keyed(r)[key] ?? 0), digits: 2 }));
}

/**
 * The section, or nothing when no run of the two loads is there — or, for a variant
 * (`###`), when none of its runs counted calls (its CPU is in its scenario tables already).
 */
export function budgetSection(cells: Cells, level: '##' | '###', note?: string): string[] {
  const columns = columnsOf(cells);
  const counted = columns.filter((c) => (cells.get(`${c.scenario}/${c.target}`) ?? []).some((r) => r.budget));
  if (columns.length === 0 || (level === '###' && counted.length === 0)) return [];
  const out = [
    `${level} Budget per delivery`,
    '',
    ...(note === undefined ? [] : [note, '']),
    'Each value: the run’s total ÷ its deliveries, median of the runs. CPU over the delivery window (first hand-over → last first 2xx); Redis commands and Postgres statements from the first hand-over to 1.5 s after the last first 2xx, counted in each process as it sends them (`bench/src/calls-probe.ts`) and by the servers: `INFO commandstats` of the bench session’s own redis-server, `pg_stat_database` of the run’s database (pg_stat_statements is not loaded on the shared server). What each hop must do and what it does: [`docs/performance.md`](docs/performance.md).',
    '',
    ...table('per delivery', columns, ROWS, cells),
    '',
  ];
  if (counted.length > 0) {
    out.push(
      `${level}# Top Redis commands and scripts per delivery`,
      '',
      ...table('process · command', counted, topRows('redis', counted, cells), cells),
      '',
      `${level}# Top Postgres statements per delivery`,
      '',
      ...table('process · statement', counted, topRows('pg', counted, cells), cells),
      '',
    );
  }
  return out;
}
