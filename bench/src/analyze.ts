/**
 * What the receiver saw, judged per destination (docs/design.md "How we measure"; all at the receiver):
 *
 * - worst window: the most arrivals (any status: every request counts against a limit) in
 *   any window [tᵢ, tᵢ + 1 s) anchored at every arrival — that set contains the worst window,
 *   so the maximum is exact (two pointers over sorted times). Its limit is the highest limit
 *   in force at any moment of the window (so a window across a change is judged leniently;
 *   limit-change.ts judges the transitions themselves);
 * - refused: requests a strictly enforcing receiver would have refused (greedy: admit while
 *   the admitted ones in the trailing second number fewer than the limit in force);
 * - with a burst allowance (docs/adr/0008) a window may hold the burst: windows are judged
 *   against it, and `bucketRefused` counts what a token bucket of capacity `burst` refilled at
 *   the limit per second would have refused (the long-run rate);
 * - delivered: distinct expected event ids answered 2xx; lost = expected − delivered;
 *   duplicated = 2xx answers beyond the first for one id;
 * - latency: first 2xx arrival − the event's creation time (`bench.createdAt`);
 * - wall: first creation → last first-2xx; the ideal of a burst is (ceil(N/L) − 1) s;
 * - webhook-id: one id must carry one `webhook-id` across its retries (Sluice only).
 */

import { readFileSync } from 'node:fs';
import { percentile, round } from './common.ts';
import { limitChangeStats } from './limit-change.ts';
import type { AppliedChange } from './protocol.ts';
import { idealWallS, type Workload } from './workload.ts';

const WINDOW_MS = 1_000;

export interface Arrival {
  t: number;
  dest: string;
  id: string;
  created: number | null;
  wid: string;
  status: number;
}

export function readArrivals(file: string): Arrival[] {
  const text = readFileSync(file, 'utf8');
  const out: Arrival[] = [];
  let start = 0;
  while (start < text.length) {
    let end = text.indexOf('\n', start);
    if (end < 0) end = text.length;
    if (end > start) out.push(JSON.parse(text.slice(start, end)) as Arrival);
    start = end + 1;
  }
  return out;
}

/** The limit in force over time: [from, limit] steps, ascending. */
type LimitSteps = [number, number][];

function limitAt(steps: LimitSteps, t: number): number {
  let limit = (steps[0] as [number, number])[1];
  for (const [from, l] of steps) {
    if (from > t) break;
    limit = l;
  }
  return limit;
}

function highestLimitIn(steps: LimitSteps, from: number, to: number): number {
  let limit = limitAt(steps, from);
  for (const [at, l] of steps) if (at > from && at < to && l > limit) limit = l;
  return limit;
}

interface SlidingStats {
  maxCount: number;
  maxRatio: number;
  overWindows: number;
  refused: number;
}

/**
 * Requests a token bucket of capacity `burst`, refilled at `limit` per second and full at the
 * first arrival, would have refused (a refused request takes no token).
 */
function bucketRefused(times: readonly number[], limit: number, burst: number): number {
  let tokens = burst;
  let last = times[0] ?? 0;
  let refused = 0;
  for (const t of times) {
    tokens = Math.min(burst, tokens + ((t - last) * limit) / WINDOW_MS);
    last = t;
    if (tokens >= 1 - 1e-9) tokens -= 1;
    else refused++;
  }
  return refused;
}

/** Exact sliding-window statistics of one destination's sorted arrival times. */
function slidingStats(times: readonly number[], steps: LimitSteps): SlidingStats {
  let maxCount = 0;
  let maxRatio = 0;
  let overWindows = 0;
  for (let i = 0, j = 0; i < times.length; i++) {
    const ti = times[i] as number;
    if (j < i) j = i;
    while (j < times.length && (times[j] as number) < ti + WINDOW_MS) j++;
    const count = j - i;
    const limit =
      steps.length === 1 ? (steps[0] as [number, number])[1] : highestLimitIn(steps, ti, ti + WINDOW_MS);
    if (count > maxCount) maxCount = count;
    if (count / limit > maxRatio) maxRatio = count / limit;
    if (count > limit) overWindows++;
  }
  const admitted: number[] = [];
  let head = 0;
  let refused = 0;
  for (const t of times) {
    while (head < admitted.length && (admitted[head] as number) <= t - WINDOW_MS) head++;
    if (admitted.length - head < limitAt(steps, t)) admitted.push(t);
    else refused++;
  }
  return { maxCount, maxRatio, overWindows, refused };
}

export interface DestinationResult {
  id: string;
  limit: number;
  events: number;
  requests: number;
  delivered: number;
  maxCount: number;
  maxRatio: number;
  refused: number;
  bucketRefused: number | null;
  doneS: number | null;
}

export interface Analysis {
  expected: number;
  requests: number;
  delivered: number;
  lost: number;
  duplicated: number;
  non2xx: number;
  status429: number;
  unknownRequests: number;
  webhookIdMismatches: number;
  t0: number | null;
  wallS: number | null;
  idealS: number | null;
  wallRatio: number | null;
  deliveriesPerS: number | null;
  worstRatio: number;
  destinationsOver: number;
  overWindows: number;
  refused: number;
  /** With burst allowances: requests their token buckets would have refused (else null). */
  bucketRefused: number | null;
  latencyMs: {
    p50: number | null;
    p90: number | null;
    p99: number | null;
    max: number | null;
    mean: number | null;
    /**
     * The p99 of the events created `WARM_S` or more after t0: the run without its first
     * seconds, when every process starts cold (the whole-run p99 is the target's number).
     */
    p99Warm: number | null;
    /**
     * The p99 of the events created in the first second after t0, when every process is
     * coldest: with `p99Warm`, where a run's p99 comes from.
     */
    p99FirstSecond: number | null;
  };
  doneS: { p50: number | null; max: number | null };
  /**
   * Where a backlog's wall goes (destinations with at least two runs of events): each one's
   * first 2xx after t0, and its window cycle — from the i-th first 2xx of a run to the i-th
   * of the next (`limit` later; the ideal is one period, 1,000 ms). The wall of such a
   * destination is about its first arrival plus one cycle per run after the first.
   */
  backlog: {
    firstArrivalMs: { p50: number | null; max: number | null };
    cycleMs: { p50: number | null; p90: number | null };
  } | null;
  worst: { id: string; limit: number; maxCount: number }[];
  limitChange: ReturnType<typeof limitChangeStats> | null;
}

/** Analysis.backlog: first arrivals and window cycles of the destinations given ≥ 2 runs of events. */
function backlogStats(firstTimes: Map<string, number[]>, w: Workload, t0: number): Analysis['backlog'] {
  const firsts: number[] = [];
  const cycles: number[] = [];
  for (const d of w.destinations) {
    const list = firstTimes.get(d.id);
    if (d.events < 2 * d.limit || list === undefined || list.length === 0) continue;
    list.sort((a, b) => a - b);
    firsts.push((list[0] as number) - t0);
    for (let k = d.limit; k < list.length; k++)
      cycles.push((list[k] as number) - (list[k - d.limit] as number));
  }
  if (firsts.length === 0) return null;
  firsts.sort((a, b) => a - b);
  cycles.sort((a, b) => a - b);
  return {
    firstArrivalMs: { p50: round(percentile(firsts, 50)), max: round(firsts[firsts.length - 1]) },
    cycleMs: { p50: round(percentile(cycles, 50)), p90: round(percentile(cycles, 90)) },
  };
}

/** Seconds after t0 from which an event counts as sent to a warm service (`p99Warm`). */
export const WARM_S = 2;

export interface AnalyzeOptions {
  /** Creation time of the first event, from the driver; else the earliest `created` seen. */
  t0?: number | undefined;
  changes?: readonly AppliedChange[];
}

function stepsOf(initial: number, changes: readonly AppliedChange[], dest: string): LimitSteps {
  const steps: LimitSteps = [[Number.NEGATIVE_INFINITY, initial]];
  for (const c of changes.filter((x) => x.dest === dest).sort((a, b) => a.appliedAt - b.appliedAt)) {
    steps.push([c.appliedAt, c.limit]);
  }
  return steps;
}

export function analyze(
  arrivals: readonly Arrival[],
  w: Workload,
  options: AnalyzeOptions = {},
): { summary: Analysis; perDestination: DestinationResult[]; times: Map<string, number[]> } {
  const changes = options.changes ?? [];
  const times = new Map<string, number[]>(w.destinations.map((d) => [d.id, []]));
  const eventsOf = new Map(w.destinations.map((d) => [d.id, d.events]));
  const firstOk = new Map<string, Arrival>();
  const widOf = new Map<string, string>();
  let ok = 0;
  let non2xx = 0;
  let status429 = 0;
  let unknown = 0;
  let unexpectedOk = 0;
  let mismatches = 0;
  let minCreated = Number.POSITIVE_INFINITY;
  for (const a of arrivals) {
    const list = times.get(a.dest);
    if (list === undefined) {
      unknown++;
      continue;
    }
    list.push(a.t);
    if (a.created !== null && a.created < minCreated) minCreated = a.created;
    if (a.wid) {
      const seen = widOf.get(a.id);
      if (seen === undefined) widOf.set(a.id, a.wid);
      else if (seen !== a.wid) mismatches++;
    }
    if (a.status < 200 || a.status >= 300) {
      non2xx++;
      if (a.status === 429) status429++;
      continue;
    }
    ok++;
    const sep = a.id.lastIndexOf(':');
    const seq = Number(a.id.slice(sep + 1));
    const expected = a.id.slice(0, sep) === a.dest && seq >= 0 && seq < (eventsOf.get(a.dest) ?? 0);
    if (!expected) {
      unexpectedOk++;
      continue;
    }
    const prev = firstOk.get(a.id);
    if (prev === undefined || a.t < prev.t) firstOk.set(a.id, a);
  }

  const t0 = options.t0 ?? (Number.isFinite(minCreated) ? minCreated : null);
  const latencies: number[] = [];
  const warmLatencies: number[] = [];
  const firstSecondLatencies: number[] = [];
  const deliveredOf = new Map<string, number>();
  const lastOf = new Map<string, number>();
  const firstTimes = new Map<string, number[]>();
  let last: number | null = null;
  for (const a of firstOk.values()) {
    const list = firstTimes.get(a.dest);
    if (list) list.push(a.t);
    else firstTimes.set(a.dest, [a.t]);
    if (last === null || a.t > last) last = a.t;
    if (a.created !== null) {
      latencies.push(a.t - a.created);
      if (t0 !== null && a.created >= t0 + WARM_S * 1_000) warmLatencies.push(a.t - a.created);
      if (t0 !== null && a.created < t0 + 1_000) firstSecondLatencies.push(a.t - a.created);
    }
    deliveredOf.set(a.dest, (deliveredOf.get(a.dest) ?? 0) + 1);
    if (a.t > (lastOf.get(a.dest) ?? Number.NEGATIVE_INFINITY)) lastOf.set(a.dest, a.t);
  }
  latencies.sort((a, b) => a - b);
  warmLatencies.sort((a, b) => a - b);
  firstSecondLatencies.sort((a, b) => a - b);

  const perDestination: DestinationResult[] = [];
  let worstRatio = 0;
  let destinationsOver = 0;
  let overWindows = 0;
  let refused = 0;
  let bucketRefusedSum: number | null = null;
  for (const d of w.destinations) {
    const list = (times.get(d.id) as number[]).sort((a, b) => a - b);
    // With a burst, a window of one period may hold the burst (the bucket keeps the rate).
    const s = slidingStats(list, stepsOf(d.burst ?? d.limit, changes, d.id));
    const bucket = d.burst === undefined ? null : bucketRefused(list, d.limit, d.burst);
    if (bucket !== null) bucketRefusedSum = (bucketRefusedSum ?? 0) + bucket;
    worstRatio = Math.max(worstRatio, s.maxRatio);
    if (s.overWindows > 0) destinationsOver++;
    overWindows += s.overWindows;
    refused += s.refused;
    const delivered = deliveredOf.get(d.id) ?? 0;
    const lastT = lastOf.get(d.id);
    perDestination.push({
      id: d.id,
      limit: d.limit,
      events: d.events,
      requests: list.length,
      delivered,
      maxCount: s.maxCount,
      maxRatio: round(s.maxRatio, 3) as number,
      refused: s.refused,
      bucketRefused: bucket,
      doneS:
        delivered === d.events && t0 !== null && lastT !== undefined ? round((lastT - t0) / 1_000) : null,
    });
  }
  const done = perDestination
    .map((d) => d.doneS)
    .filter((x): x is number => x !== null)
    .sort((a, b) => a - b);
  const expected = w.destinations.reduce((sum, d) => sum + d.events, 0);
  const wallS = t0 !== null && last !== null ? (last - t0) / 1_000 : null;
  const idealS = idealWallS(w);
  const summary: Analysis = {
    expected,
    requests: arrivals.length,
    delivered: firstOk.size,
    lost: expected - firstOk.size,
    duplicated: ok - unexpectedOk - firstOk.size,
    non2xx,
    status429,
    unknownRequests: unknown + unexpectedOk,
    webhookIdMismatches: mismatches,
    t0,
    wallS: round(wallS, 3),
    idealS,
    wallRatio: wallS !== null && idealS ? round(wallS / idealS, 3) : null,
    deliveriesPerS: wallS ? Math.round(firstOk.size / wallS) : null,
    worstRatio: round(worstRatio, 3) as number,
    destinationsOver,
    overWindows,
    refused,
    bucketRefused: bucketRefusedSum,
    latencyMs: {
      p50: round(percentile(latencies, 50)),
      p90: round(percentile(latencies, 90)),
      p99: round(percentile(latencies, 99)),
      max: round(latencies[latencies.length - 1]),
      mean: round(latencies.length > 0 ? latencies.reduce((a, b) => a + b, 0) / latencies.length : null),
      p99Warm: round(percentile(warmLatencies, 99)),
      p99FirstSecond: round(percentile(firstSecondLatencies, 99)),
    },
    doneS: { p50: percentile(done, 50), max: done[done.length - 1] ?? null },
    worst: [...perDestination]
      .sort((a, b) => b.maxRatio - a.maxRatio)
      .slice(0, 5)
      .map(({ id, limit, maxCount }) => ({ id, limit, maxCount })),
    backlog: t0 === null ? null : backlogStats(firstTimes, w, t0),
    limitChange: changes.length > 0 ? limitChangeStats(times, w, changes) : null,
  };
  return { summary, perDestination, times };
}

/**
 * Sends in the trailing second, sampled every `stepMs` from t0, for a few destinations:
 * the data of the plot (plot.ts).
 */
export function trailingSeries(
  times: Map<string, number[]>,
  dests: readonly string[],
  t0: number,
  stepMs = 100,
): Record<string, [number, number][]> {
  const out: Record<string, [number, number][]> = {};
  for (const dest of dests) {
    const list = times.get(dest) ?? [];
    const end = list[list.length - 1] ?? t0;
    const points: [number, number][] = [];
    let lo = 0;
    let hi = 0;
    for (let t = t0; t <= end + WINDOW_MS; t += stepMs) {
      while (hi < list.length && (list[hi] as number) <= t) hi++;
      while (lo < hi && (list[lo] as number) <= t - WINDOW_MS) lo++;
      points.push([round((t - t0) / 1_000, 2) as number, hi - lo]);
    }
    out[dest] = points;
  }
  return out;
}
