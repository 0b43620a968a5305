/**
 * BENCHMARKS.md's isolation tables (slow-receiver, busy-tenant): per target, the measured
 * (healthy, quiet) destinations' latency alone and beside the noise, the ratio of the p99s,
 * and the measured events late — answered 2xx more than `lateAfterS` after creation, or not
 * by the end of the run. Medians of the cell's runs.
 */

import { median, round } from './common.ts';
import type { IsolationResult } from './isolation.ts';
import type { MeasuredLatency } from './measured.ts';
import { type Cells, NAMES } from './report-rows.ts';
import { TARGETS } from './targets/target.ts';

/** What each isolation scenario puts beside the measured destinations. */
const NOISE: Record<string, string> = {
  'slow-receiver':
    '20 healthy destinations (10/s, 5 events/s each for 16 s) alone, then beside one destination on the same receiver origin whose answers take 20 s (limit 50/s, fed at 50/s, timeout 30 s); the run ends once every healthy event arrived or 38 s after the first, without waiting for the slow one.',
  'busy-tenant':
    "A quiet tenant's 20 destinations (10/s, 5 events/s each for 25 s) alone, then beside another tenant's backlog of 40,000 events to 4 destinations at 50/s (posted at once, in batches of 1000); the run ends once every quiet event arrived or 47 s after the first.",
  'hanging-tenant':
    "A quiet tenant's 20 destinations (10/s, 5 events/s each for 16 s) alone, then beside another tenant's 20 destinations on the same receiver origin whose receiver answers one request in four and leaves the others open (limit 50/s each, fed at 50/s, timeout 60 s); the run ends once every quiet event arrived or 38 s after the first, without waiting for the hanging ones.",
};

/** The median of `get` over the runs, "> x" when it is a lower bound in any of them. */
function medianOf(
  runs: MeasuredLatency[],
  get: (m: MeasuredLatency) => number | null,
  atLeast: (m: MeasuredLatency) => boolean = () => false,
): string {
  const values = runs.map(get).filter((v): v is number => typeof v === 'number');
  const m = median(values);
  if (m === null) return '–';
  const text = (round(m, m >= 100 ? 0 : 1) as number).toLocaleString('en-US');
  return runs.some(atLeast) ? `> ${text}` : text;
}

/** Whether the p-th percentile falls on an event not delivered by the end (a lower bound). */
const atLeast =
  (p: number) =>
  (m: MeasuredLatency): boolean =>
    m.delivered < Math.ceil((p / 100) * m.events);

export function isolationTable(cells: Cells, scenario: string): string[] {
  const rows: string[] = [];
  let lateAfterS: number | undefined;
  for (const target of TARGETS) {
    const runs = cells.get(`${scenario}/${target}`) ?? [];
    const results = runs.map((r) => r.isolation).filter((x): x is IsolationResult => x !== undefined);
    const alone = results.map((x) => x.alone).filter((m): m is MeasuredLatency => m !== null);
    const beside = results.map((x) => x.beside).filter((m): m is MeasuredLatency => m !== null);
    if (alone.length === 0 && beside.length === 0) continue;
    const ratio = median(results.map((x) => x.p99Ratio).filter((v): v is number => v !== null));
    const lateOf = (ms: MeasuredLatency[]): string =>
      `${medianOf(ms, (m) => m.late)} of ${medianOf(ms, (m) => m.events)} (${medianOf(ms, (m) => m.undelivered)} undelivered)`;
    const ratioText =
      ratio === null ? '–' : `${beside.some(atLeast(99)) ? '> ' : ''}${round(ratio, ratio >= 100 ? 0 : 1)}×`;
    lateAfterS ??= beside[0]?.lateAfterS ?? alone[0]?.lateAfterS;
    rows.push(
      `| ${NAMES[target]} (n=${results.length}) | ${medianOf(alone, (m) => m.p50Ms, atLeast(50))} | ${medianOf(alone, (m) => m.p99Ms, atLeast(99))} | ${medianOf(beside, (m) => m.p50Ms, atLeast(50))} | **${medianOf(beside, (m) => m.p99Ms, atLeast(99))}** | ${ratioText} | ${lateOf(alone)} | **${lateOf(beside)}** |`,
    );
  }
  if (rows.length === 0) return [];
  return [
    NOISE[scenario] ?? '',
    '',
    `| target | p50 alone ms | **p99 alone ms** | p50 beside ms | **p99 beside ms** | p99 beside ÷ alone | late alone (> ${lateAfterS} s, or not delivered by the end) | **late beside** |`,
    '|---|---|---|---|---|---|---|---|',
    ...rows,
  ];
}
