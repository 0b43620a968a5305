/**
 * Sluice's own numbers, read from its Prometheus text at `/metrics` (the bench has no other
 * way inside it): the tick lag histogram and the tick counters. Snapshots are cumulative;
 * a phase is the difference of two.
 */

export interface SluiceMetrics {
  /** Cumulative bucket counts of `sluice_tick_lag_seconds`, by upper bound in seconds. */
  tickLagBuckets: Record<string, number>;
  tickLagCount: number;
  tickLagSum: number;
  /** `sluice_ticks_total` by result. */
  ticks: Record<string, number>;
  /** `sluice_deliveries_total` by outcome. */
  deliveries: Record<string, number>;
  /** The distributed shape: each service's own, by name (the above is their sum). */
  byProcess?: Record<string, SluiceMetrics>;
}

const LINE = /^([a-z_]+)(?:\{([^}]*)\})? ([0-9.eE+-]+|NaN|\+Inf)$/;

function label(labels: string | undefined, name: string): string | undefined {
  return labels ? new RegExp(`${name}="([^"]*)"`).exec(labels)?.[1] : undefined;
}

export function parseMetrics(text: string): SluiceMetrics {
  const m: SluiceMetrics = { tickLagBuckets: {}, tickLagCount: 0, tickLagSum: 0, ticks: {}, deliveries: {} };
  for (const line of text.split('\n')) {
    const match = LINE.exec(line);
    if (!match) continue;
    const [, name, labels, raw] = match;
    const value = Number(raw);
    if (name === 'sluice_tick_lag_seconds_bucket') m.tickLagBuckets[label(labels, 'le') ?? ''] = value;
    else if (name === 'sluice_tick_lag_seconds_count') m.tickLagCount = value;
    else if (name === 'sluice_tick_lag_seconds_sum') m.tickLagSum = value;
    else if (name === 'sluice_ticks_total') m.ticks[label(labels, 'result') ?? ''] = value;
    else if (name === 'sluice_deliveries_total') m.deliveries[label(labels, 'outcome') ?? ''] = value;
  }
  return m;
}

function diffRecord(a: Record<string, number>, b: Record<string, number>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [k, v] of Object.entries(b)) out[k] = v - (a[k] ?? 0);
  return out;
}

export interface TickLag {
  ticks: number;
  /** Ticks by result during the phase. */
  byResult: Record<string, number>;
  meanMs: number | null;
  /** The upper bound (ms) of the histogram bucket that holds the median. */
  p50AtMostMs: number | null;
  /** The upper bound (ms) of the histogram bucket that holds the 99th percentile. */
  p99AtMostMs: number | null;
  /** Share of ticks that ran at most 20 ms late (the cost-curve target of docs/performance.md asks ≥ 0.99). */
  shareWithin20ms: number | null;
}

/** The tick lag of a phase, between two snapshots. */
export function tickLagBetween(a: SluiceMetrics | null, b: SluiceMetrics | null): TickLag | null {
  if (!b) return null;
  const base = a ?? { tickLagBuckets: {}, tickLagCount: 0, tickLagSum: 0, ticks: {}, deliveries: {} };
  const buckets = diffRecord(base.tickLagBuckets, b.tickLagBuckets);
  const count = b.tickLagCount - base.tickLagCount;
  const bounds = Object.keys(buckets)
    .filter((le) => le !== '+Inf')
    .map(Number)
    .sort((x, y) => x - y);
  /** The upper bound (ms) of the first bucket that holds the share `q` of the ticks. */
  const atMost = (q: number): number | null => {
    if (count === 0) return null;
    const le = bounds.find((x) => (buckets[String(x)] ?? 0) >= q * count);
    return le === undefined ? Number.POSITIVE_INFINITY : le * 1_000;
  };
  return {
    ticks: count,
    byResult: diffRecord(base.ticks, b.ticks),
    meanMs: count > 0 ? ((b.tickLagSum - base.tickLagSum) / count) * 1_000 : null,
    p50AtMostMs: atMost(0.5),
    p99AtMostMs: atMost(0.99),
    shareWithin20ms: count > 0 ? (buckets['0.02'] ?? 0) / count : null,
  };
}

/** Each service's tick lag over a phase (the distributed shape: who ran the late ticks), where it ran any. */
export function tickLagByProcess(
  a: SluiceMetrics | null,
  b: SluiceMetrics | null,
): Record<string, TickLag> | undefined {
  if (!b?.byProcess) return undefined;
  const out: Record<string, TickLag> = {};
  for (const [name, m] of Object.entries(b.byProcess)) {
    const lag = tickLagBetween(a?.byProcess?.[name] ?? null, m);
    if (lag && lag.ticks > 0) out[name] = lag;
  }
  return out;
}
