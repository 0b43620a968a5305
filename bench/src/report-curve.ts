/**
 * The cost curve in BENCHMARKS.md (curve.ts): a row per target and size, each value the
 * median of that size's runs in the cell (the latest session's), and the targets it is
 * judged against (docs/performance.md): CPU per delivery at 100,000 destinations against
 * 1,000, tick lag at every size, 100,000 idle destinations.
 */

import { median, round } from './common.ts';
import { type Cells, cellRuns, NAMES, type RunRecord } from './report-rows.ts';
import { TARGETS, type TargetName } from './targets/target.ts';

const SCENARIO = 'cost-curve';
/** A run whose median delivery took longer than this was queueing: over capacity. */
const MAX_P50_MS = 1_000;

/** Every value of one size's runs, by what it is. */
interface SizeRow {
  size: number;
  runs: number;
  /** Runs left out of the medians: they queued (above capacity, or the machine was shared). */
  queued: number;
  rate: number;
  achieved: number | null;
  cpuUs: number | null;
  lagP50: number | null;
  lagP99: number | null;
  within20: number | null;
  latencyP99: number | null;
  redisPerDest: number | null;
  destinationsPerDest: number | null;
  databasePerDest: number | null;
  idlePct: number | null;
  idleTicks: number | null;
  /** The same window before the run's first event, when measured (runs since the floor was). */
  floorPct: number | null;
  setupS: number | null;
}

const per = (r: RunRecord, get: (s: Record<string, number>) => number | undefined, base = true) => {
  const done = r.storage?.done;
  const start = r.storage?.start;
  if (!done || !r.curve) return null;
  const end = get(done);
  const before = base && start ? get(start) : 0;
  return end === undefined || before === undefined ? null : (end - before) / r.curve.size;
};

function med(rs: RunRecord[], get: (r: RunRecord) => number | null | undefined): number | null {
  // A tick lag past the histogram's last bucket (5 s) is +∞: kept, it is a measure.
  return median(rs.map(get).filter((v): v is number => typeof v === 'number' && !Number.isNaN(v)));
}

/** The target's sizes in the cell, smallest first, each with its medians. */
function curveRows(cells: Cells, target: TargetName): SizeRow[] {
  const all = (cells.get(`${SCENARIO}/${target}`) ?? []).filter((r) => r.curve !== undefined);
  const sizes = [...new Set(all.map((r) => r.curve?.size as number))].sort((a, b) => a - b);
  return sizes.map((size) => {
    const ran = all.filter((r) => r.curve?.size === size);
    // Below capacity the median delivery waits for no queue; a run whose median took over
    // MAX_P50_MS queued, and measures the queue, not the work. Its medians come from the runs
    // that did not, unless every run did.
    const held = ran.filter((r) => (r.latencyMs.p50 ?? Number.POSITIVE_INFINITY) <= MAX_P50_MS);
    const rs = held.length > 0 ? held : ran;
    return {
      size,
      runs: ran.length,
      queued: ran.length - held.length,
      rate: med(rs, (r) => r.curve?.rate) ?? 0,
      achieved: med(rs, (r) => r.deliveriesPerS),
      cpuUs: med(rs, (r) =>
        r.systemCpuS !== null && r.delivered ? (1e6 * r.systemCpuS) / r.delivered : null,
      ),
      lagP50: med(rs, (r) => r.tickLag?.p50AtMostMs),
      lagP99: med(rs, (r) => r.tickLag?.p99AtMostMs),
      within20: med(rs, (r) => r.tickLag?.shareWithin20ms),
      latencyP99: med(rs, (r) => r.latencyMs.p99),
      // Redis: what the run added (the server holds nothing else); the store: all it holds.
      redisPerDest: med(rs, (r) => per(r, (s) => s.redisUsedMemory)),
      destinationsPerDest: med(rs, (r) => per(r, (s) => s.destinations, false)),
      databasePerDest: med(rs, (r) => per(r, (s) => s.database, false)),
      idlePct: med(rs, (r) => r.idle?.systemCpuPct),
      idleTicks: med(rs, (r) => r.idle?.ticks),
      floorPct: med(rs, (r) => r.floor?.systemCpuPct),
      setupS: med(rs, (r) => r.setup.setupS),
    };
  });
}

const n = (x: number | null, digits = 0): string =>
  x === null
    ? '–'
    : x === Number.POSITIVE_INFINITY
      ? '> 5,000'
      : (round(x, digits) as number).toLocaleString('en-US', { maximumFractionDigits: digits });

/** The table: a row per target and size. */
export function curveTable(cells: Cells): string[] {
  const out = [
    '| target | destinations (runs) | offered / s | delivered / s | **CPU µs per delivery** | ÷ smallest size | tick lag p50 ms (≤ bucket) | **tick lag p99 ms** (≤ bucket) | ticks ≤ 20 ms late | latency p99 ms | Redis bytes per destination | store: destinations table bytes per destination | store: whole database bytes per destination | **idle: % of one core** | idle: ticks | floor before any work: % of one core | setup s |',
    `|---|${'---|'.repeat(16)}`,
  ];
  for (const target of TARGETS) {
    const rows = curveRows(cells, target);
    const first = rows[0]?.cpuUs ?? null;
    for (const r of rows) {
      const ratio = first && r.cpuUs !== null ? `${n(r.cpuUs / first, 2)} ×` : '–';
      out.push(
        `| ${NAMES[target]} | ${n(r.size)} (${r.runs}${r.queued > 0 ? `; ${r.queued} queued, left out` : ''}) | ${n(r.rate)} | ${n(r.achieved)} | ${n(r.cpuUs)} | ${ratio} | ${n(r.lagP50)} | ${n(r.lagP99)} | ${n(r.within20, 3)} | ${n(r.latencyP99, 1)} | ${n(r.redisPerDest)} | ${n(r.destinationsPerDest)} | ${n(r.databasePerDest)} | ${n(r.idlePct, 2)} | ${n(r.idleTicks)} | ${n(r.floorPct, 2)} | ${n(r.setupS, 1)} |`,
      );
    }
  }
  out.push(
    '',
    'Each size is a run of its own from scratch: that many destinations (limit 10/s, far above their share), one steady stream at the offered rate over all of them, batched every 50 ms, until every destination has had at least one event and for at least 20 s; then the idle tail (from 2 s after the last delivery, the bench’s probes paused and, where the server has autovacuum off, after a VACUUM of the run’s database, as autovacuum would have run; 10 s unless `--curve-idle`). The floor is the same window measured the same way after the set-up, before the first event: the same processes and destinations, never worked — what the processes cost doing nothing (timers, connection checks, BullMQ’s stalled check), which the idle tail holds too. The idle target is judged twice: on the whole tail, and on the tail less the lowest floor of the target’s sizes (what the destinations add; a floor right after setting up 100,000 destinations can still hold the set-up’s end). The floor’s window begins with the same VACUUM (ANALYZE) where autovacuum is off, so the run starts on fresh statistics. A run whose median delivery took over 1 s was queueing (over capacity, or the machine shared): it is left out of its size’s medians when another run of the size did not queue. CPU: every process of the system (the single box; the distributed shape’s four services, its Postgres backends and redis-server) from the first hand-over to the last delivery, ÷ deliveries. Redis: `used_memory` after the last delivery minus before the first hand-over. Store: its size after the last delivery (SQLite: pages; Postgres: `pg_total_relation_size`, `pg_database_size`), the run’s events, deliveries and attempts included in the whole database.',
  );
  return out;
}

interface Judgement {
  measured: string;
  met: boolean | null;
}

const at = (rows: SizeRow[], size: number): SizeRow | undefined => rows.find((r) => r.size === size);

/** CPU per delivery at 100,000 destinations ≤ 1.2 × at 1,000. */
function cpuGrowth(cells: Cells, target: TargetName): Judgement {
  const rows = curveRows(cells, target);
  const small = at(rows, 1_000);
  const large = at(rows, 100_000);
  if (!small?.cpuUs || !large?.cpuUs) return { measured: 'not run at 1,000 and 100,000', met: null };
  const ratio = large.cpuUs / small.cpuUs;
  const middle = rows.filter((r) => r !== small && r !== large).map((r) => `${n(r.size)}: ${n(r.cpuUs)} µs`);
  return {
    measured: `${n(large.cpuUs)} µs against ${n(small.cpuUs)} µs = ${n(ratio, 2)} × (${[...middle, `at ${n(small.rate)}/s`].join('; ')})`,
    met: ratio <= 1.2,
  };
}

/** Tick lag p99 < 20 ms at every size: at least 99 % of the ticks of each size's runs within 20 ms. */
function lagEverywhere(cells: Cells, target: TargetName): Judgement {
  const rows = curveRows(cells, target);
  if (rows.length === 0) return { measured: 'not run', met: null };
  return {
    measured: rows
      .map(
        (r) =>
          `${n(r.size)}: p99 ≤ ${n(r.lagP99)} ms, ${n(r.within20 === null ? null : 100 * r.within20, 1)} % ≤ 20 ms`,
      )
      .join('; '),
    met: rows.every((r) => r.within20 !== null && r.within20 >= 0.99),
  };
}

/** 100,000 idle destinations: the whole system's idle tail ≤ 1 % of a core, and no ticks. */
function idleLarge(cells: Cells, target: TargetName): Judgement {
  const large = at(curveRows(cells, target), 100_000);
  if (!large || large.idlePct === null) return { measured: 'not run at 100,000', met: null };
  return {
    measured: `${n(large.idlePct, 2)} % of a core, ${n(large.idleTicks)} ticks`,
    met: large.idlePct <= 1 && large.idleTicks === 0,
  };
}

/**
 * What 100,000 idle destinations add to the processes' own cost doing nothing: the tail less
 * the lowest floor of the target's sizes (a floor measured right after a large set-up can
 * still hold its end, which would flatter the tail), ≤ 1 % of a core. Unclamped: a tail below
 * the floor is the noise of a 10 s window, shown as it is.
 */
function idleAboveFloor(cells: Cells, target: TargetName): Judgement {
  const rows = curveRows(cells, target);
  const large = at(rows, 100_000);
  const floors = rows.map((r) => r.floorPct).filter((f): f is number => f !== null);
  if (!large || large.idlePct === null || floors.length === 0)
    return { measured: 'no floor measured at 100,000', met: null };
  const floor = Math.min(...floors);
  return {
    measured: `${n(large.idlePct - floor, 2)} % of a core: the tail ${n(large.idlePct, 2)} % less the processes' lowest floor ${n(floor, 2)} %`,
    met: large.idlePct - floor <= 1,
  };
}

/** The cost curve's three targets for a shape, as report-targets.ts lists them. */
export function curveTargets(target: TargetName): {
  target: string;
  judge: (cells: Cells) => Judgement;
  runs: (cells: Cells) => RunRecord[];
}[] {
  const runs = cellRuns(SCENARIO, [target]);
  return [
    {
      target: 'cost-curve: CPU per delivery at 100,000 destinations ≤ 1.2 × at 1,000',
      judge: (c) => cpuGrowth(c, target),
      runs,
    },
    {
      target: 'cost-curve: tick lag p99 < 20 ms at every size',
      judge: (c) => lagEverywhere(c, target),
      runs,
    },
    {
      target: 'cost-curve: 100,000 idle destinations ≤ 1 % of a core (no ticks), the whole system',
      judge: (c) => idleLarge(c, target),
      runs,
    },
    {
      target: 'cost-curve: 100,000 idle destinations ≤ 1 % of a core above the processes doing nothing',
      judge: (c) => idleAboveFloor(c, target),
      runs,
    },
  ];
}
