/**
 * The cost curve: how what Sluice costs grows with the number of destinations it serves, at
 * a delivery rate held fixed below the machine's capacity (so the numbers are the cost of
 * the work, not of a queue for a core).
 *
 * One run per size, each from scratch: `size` destinations (limit 10/s each, far above their
 * share, so the limit never binds), one steady stream of `rate` events a second over all of
 * them — destination i's k-th event due at (k·size + i) ÷ rate seconds, so consecutive
 * events go to consecutive destinations and every destination gets its events evenly spaced
 * — handed over in batches every STEP_MS (`events.sendBatch`), for at least `minSeconds` and
 * until every destination has had at least one event (100,000 destinations at 1,000/s:
 * 100 s, one event each). Then an idle tail: every destination idle, nothing to tick.
 *
 * The rate is per target (`--curve-rate 1000,sluice-distributed=400`): a shape that cannot
 * hold the default below capacity on the bench machine runs at the highest rate it holds,
 * and the report says which rate each ran.
 */

import type { TargetName } from './targets/target.ts';
import type { DestinationSpec, Workload } from './workload.ts';

export interface CurveOptions {
  /** Destinations of each size's run, in order. */
  sizes: number[];
  /** Events a second over all destinations, for any target without its own. */
  rate: number;
  /** A target's own rate, when the default would saturate it. */
  rates: Partial<Record<TargetName, number>>;
  /** A size's run lasts at least this long (more when it takes longer to reach every destination). */
  minSeconds: number;
  /** Seconds of the idle tail after the last delivery. */
  idleS: number;
}

/** Far above a destination's share of the stream (at most 1 event a second each): never binds. */
const LIMIT = 10;
/** Ingest hands over what is due this often, in one batch. */
const STEP_MS = 50;

export const CURVE_DEFAULTS: CurveOptions = {
  sizes: [1_000, 10_000, 100_000],
  rate: 1_000,
  // The distributed shape on the bench machine's 2 cores saturates below 1,000/s; 500/s
  // leaves it room for the larger sizes (docs/performance.md, How to measure).
  rates: { 'sluice-distributed': 500 },
  minSeconds: 20,
  idleS: 10,
};

export const CURVE_QUICK: CurveOptions = {
  sizes: [100, 400],
  rate: 200,
  rates: {},
  minSeconds: 1,
  idleS: 1,
};

/**
 * `--curve-rate`: a number (every target) and/or `target=number` items, comma-separated:
 * `1000`, `1000,sluice-distributed=400`.
 */
export function parseCurveRate(
  raw: string,
  targets: readonly TargetName[],
): Pick<CurveOptions, 'rate' | 'rates'> {
  const out: Pick<CurveOptions, 'rate' | 'rates'> = { rate: CURVE_DEFAULTS.rate, rates: {} };
  for (const item of raw.split(',').map((s) => s.trim())) {
    const [name, value] = item.includes('=') ? item.split('=') : [undefined, item];
    const rate = Number(value);
    if (!(rate > 0)) throw new Error(`--curve-rate: "${item}" is not a positive rate`);
    if (name === undefined) out.rate = rate;
    else if (targets.includes(name as TargetName)) out.rates[name as TargetName] = rate;
    else throw new Error(`--curve-rate: unknown target "${name}"; one of ${targets.join(', ')}`);
  }
  return out;
}

export function parseCurveSizes(raw: string): number[] {
  const sizes = raw.split(',').map((s) => Number(s.trim()));
  if (sizes.some((n) => !Number.isInteger(n) || n < 1))
    throw new Error(`--curve-sizes: "${raw}" is not a list of positive integers`);
  return sizes;
}

/** The rate a target runs at. */
export const curveRate = (o: CurveOptions, target: TargetName): number => o.rates[target] ?? o.rate;

/** One size's workload at `rate` events a second. */
export function curveWorkload(o: CurveOptions, size: number, rate: number): Workload {
  const seconds = Math.max(o.minSeconds, size / rate);
  const events = Math.max(1, Math.ceil((seconds * rate) / size));
  const width = String(size - 1).length;
  const destinations: DestinationSpec[] = Array.from({ length: size }, (_, i) => ({
    id: `d${String(i).padStart(width, '0')}`,
    limit: LIMIT,
    events,
    query: '',
  }));
  const runS = (events * size) / rate;
  return {
    scenario: 'cost-curve',
    destinations,
    ingest: { mode: 'steady', ratePerDestination: rate / size, batched: true, stepMs: STEP_MS },
    payloadBytes: 512,
    changes: [],
    retry: { attempts: 8, initialDelayMs: 1_000, maxDelayMs: 16_000 },
    // A run past twice its length plus a minute is over capacity: it stops and reports so.
    timeLimitS: Math.ceil(2 * runS + 60),
    idleS: o.idleS,
    curve: { size, rate },
  };
}
