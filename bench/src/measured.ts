/**
 * Isolation scenarios: the latency of the measured (healthy, quiet) destinations' events,
 * created → first 2xx at the receiver as everywhere in the bench, and how many were late —
 * answered 2xx more than `lateAfterS` after their creation, or not by the end of the run.
 *
 * The run ends once every measured event arrived or at the workload's time limit, without
 * waiting for the noise; an event not delivered by then waited at least from the last
 * hand-over to the end, so its latency is known only as more than that. The percentiles rank
 * such events last: when the p99 falls on one, `p99Ms` is that lower bound and `p99AtLeast`
 * says so.
 */

import type { Arrival } from './analyze.ts';
import { percentile, round } from './common.ts';
import type { Workload } from './workload.ts';

export interface MeasuredLatency {
  /** The id prefix of the measured destinations. */
  measured: string;
  events: number;
  delivered: number;
  /** Answered 2xx more than `lateAfterS` after creation, or not by the end of the run. */
  late: number;
  undelivered: number;
  lateAfterS: number;
  p50Ms: number | null;
  p90Ms: number | null;
  p99Ms: number | null;
  /** The p99 falls on an event not delivered by the end: `p99Ms` is a lower bound. */
  p99AtLeast: boolean;
  maxMs: number | null;
}

/**
 * `endT`: when the run stopped watching; `lastHandOver`: when the driver had handed every
 * event over (no event was created later), null when it had not finished.
 */
export function measuredLatency(
  arrivals: readonly Arrival[],
  w: Workload,
  endT: number,
  lastHandOver: number | null,
): MeasuredLatency | null {
  if (!w.isolation) return null;
  const { measured, lateAfterS } = w.isolation;
  const destinations = w.destinations.filter((d) => d.id.startsWith(measured));
  const eventsOf = new Map(destinations.map((d) => [d.id, d.events]));
  const first = new Map<string, number>();
  for (const a of arrivals) {
    if (a.status < 200 || a.status >= 300 || a.created === null || !eventsOf.has(a.dest)) continue;
    const latency = a.t - a.created;
    const seen = first.get(a.id);
    if (seen === undefined || latency < seen) first.set(a.id, latency);
  }
  const events = destinations.reduce((sum, d) => sum + d.events, 0);
  const latencies = [...first.values()].sort((a, b) => a - b);
  const undelivered = events - latencies.length;
  const waitedAtLeast = lastHandOver === null ? null : Math.max(0, endT - lastHandOver);
  // Undelivered events rank after every delivered one, each at (more than) `waitedAtLeast`.
  const ranked = (p: number): { ms: number | null; atLeast: boolean } => {
    if (events === 0) return { ms: null, atLeast: false };
    const i = Math.min(events - 1, Math.max(0, Math.ceil((p / 100) * events) - 1));
    return i < latencies.length
      ? { ms: latencies[i] as number, atLeast: false }
      : { ms: waitedAtLeast, atLeast: true };
  };
  const p99 = ranked(99);
  return {
    measured,
    events,
    delivered: latencies.length,
    late: latencies.filter((l) => l > lateAfterS * 1_000).length + undelivered,
    undelivered,
    lateAfterS,
    p50Ms: round(ranked(50).ms),
    p90Ms: round(ranked(90).ms),
    p99Ms: round(p99.ms),
    p99AtLeast: p99.atLeast,
    maxMs: undelivered > 0 ? null : round(percentile(latencies, 100)),
  };
}
