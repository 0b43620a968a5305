/**
 * How fast a changed limit shows at the receiver (the single box's target in docs/performance.md: "in force within one tick"),
 * measured from the moment the target acknowledged the change (Tc) until the next change
 * of the same destination (Tn):
 *
 * - lowered to L′: `settleMs` = last arrival tᵢ ≥ Tc whose window [tᵢ, tᵢ + 1 s) (ending
 *   before Tn) holds more than L′, minus Tc — after that every window keeps the new limit
 *   (0 when none ever exceeded it); `afterTickRatio` = the worst such window ÷ L′ among
 *   windows starting one tick (1 s) or more after Tc: ≤ 1 when the new limit is in force;
 * - raised from L to L″: `visibleMs` = first arrival t ≥ Tc whose trailing second (t − 1 s, t]
 *   holds more than L (more than the old limit allowed), minus Tc; `fullMs` = first arrival
 *   whose trailing second holds at least 90 % of L″, minus Tc (null: never, e.g. the
 *   backlog ran out first).
 */

import { median, round } from './common.ts';
import type { AppliedChange } from './protocol.ts';
import type { Workload } from './workload.ts';

const WINDOW_MS = 1_000;
const TICK_MS = 1_000;

interface ChangeDetail {
  dest: string;
  from: number;
  limit: number;
  atS: number;
  settleMs?: number;
  afterTickRatio?: number | null;
  visibleMs?: number | null;
  fullMs?: number | null;
}

export interface LimitChangeStats {
  lowered: {
    n: number;
    settleMsMedian: number | null;
    settleMsMax: number | null;
    afterTickRatioMax: number | null;
  };
  raised: {
    n: number;
    visibleMsMedian: number | null;
    visibleMsMax: number | null;
    neverVisible: number;
    fullMsMedian: number | null;
    fullMsMax: number | null;
  };
  /** Every change, for the run's analysis file. */
  details?: ChangeDetail[];
}

function lowered(
  list: readonly number[],
  c: AppliedChange,
  until: number,
): { settle: number; afterTick: number | null } {
  let lastViolating: number | null = null;
  let afterTick: number | null = null;
  for (let i = 0, j = 0; i < list.length; i++) {
    const ti = list[i] as number;
    if (j < i) j = i;
    while (j < list.length && (list[j] as number) < ti + WINDOW_MS) j++;
    if (ti < c.appliedAt || ti + WINDOW_MS > until) continue;
    const count = j - i;
    if (count > c.limit) lastViolating = ti;
    if (ti >= c.appliedAt + TICK_MS) afterTick = Math.max(afterTick ?? 0, count / c.limit);
  }
  return { settle: lastViolating === null ? 0 : lastViolating - c.appliedAt, afterTick };
}

function raised(
  list: readonly number[],
  c: AppliedChange,
  until: number,
): { visible: number | null; full: number | null } {
  let visible: number | null = null;
  let full: number | null = null;
  for (let j = 0, i = 0; j < list.length; j++) {
    const t = list[j] as number;
    while ((list[i] as number) <= t - WINDOW_MS) i++;
    if (t < c.appliedAt) continue;
    if (t >= until) break;
    const trailing = j - i + 1;
    if (visible === null && trailing > c.from) visible = t - c.appliedAt;
    if (full === null && trailing >= 0.9 * c.limit) {
      full = t - c.appliedAt;
      break;
    }
  }
  return { visible, full };
}

const max = (xs: number[]): number | null => (xs.length > 0 ? Math.max(...xs) : null);

export function limitChangeStats(
  times: Map<string, number[]>,
  w: Workload,
  changes: readonly AppliedChange[],
): LimitChangeStats {
  const settles: number[] = [];
  const afterTicks: number[] = [];
  const visibles: number[] = [];
  const fulls: number[] = [];
  let neverVisible = 0;
  let raisedN = 0;
  const details: ChangeDetail[] = [];
  const t0 = Math.min(...changes.map((c) => c.sentAt));
  for (const d of w.destinations) {
    const list = [...(times.get(d.id) ?? [])].sort((a, b) => a - b);
    const mine = changes.filter((c) => c.dest === d.id).sort((a, b) => a.appliedAt - b.appliedAt);
    mine.forEach((c, k) => {
      const until = mine[k + 1]?.appliedAt ?? Number.POSITIVE_INFINITY;
      const detail: ChangeDetail = {
        dest: c.dest,
        from: c.from,
        limit: c.limit,
        atS: round((c.appliedAt - t0) / 1_000, 3) as number,
      };
      if (c.limit < c.from) {
        const r = lowered(list, c, until);
        settles.push(r.settle);
        if (r.afterTick !== null) afterTicks.push(r.afterTick);
        Object.assign(detail, { settleMs: round(r.settle, 1), afterTickRatio: round(r.afterTick, 3) });
      } else if (c.limit > c.from) {
        raisedN++;
        const r = raised(list, c, until);
        if (r.visible === null) neverVisible++;
        else visibles.push(r.visible);
        if (r.full !== null) fulls.push(r.full);
        Object.assign(detail, { visibleMs: round(r.visible, 1), fullMs: round(r.full, 1) });
      }
      details.push(detail);
    });
  }
  return {
    lowered: {
      n: settles.length,
      settleMsMedian: round(median(settles), 1),
      settleMsMax: round(max(settles), 1),
      afterTickRatioMax: round(max(afterTicks), 3),
    },
    raised: {
      n: raisedN,
      visibleMsMedian: round(median(visibles), 1),
      visibleMsMax: round(max(visibles), 1),
      neverVisible,
      fullMsMedian: round(median(fulls), 1),
      fullMsMax: round(max(fulls), 1),
    },
    details,
  };
}
