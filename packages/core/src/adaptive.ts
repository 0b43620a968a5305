/**
 * Adaptive pacing (opt-in per destination, docs/adr/0008-burst-and-adaptive-pacing.md):
 * an effective limit E ≤ the configured limit L that backs off multiplicatively when the
 * receiver pushes back and recovers additively toward L, never above it (AIMD, as TCP).
 *
 *   push-back (429, 503, a Retry-After, or latency well above its baseline):
 *       E ← max(1, E × DECREASE), at most once per period (one burst of 429s from the
 *       requests already in flight is one signal, not many); a Retry-After also holds the
 *       destination: nothing is sent until it passes.
 *   a 2xx, after one whole period with no push-back:
 *       E ← min(L, E + max(1, L × INCREASE)), at most once per period.
 *   L changes (a PATCH): E starts again at the new L.
 *
 * Latency: an EWMA of attempt durations against a baseline that follows it down at once
 * and up slowly; "rising" is the EWMA above LATENCY_FACTOR × the baseline and at least
 * LATENCY_FLOOR_MS above it (a fast receiver's jitter is not a signal).
 *
 * The distributed shape runs the same arithmetic in Lua (redis `lua/includes/adapt.lua`,
 * with these constants passed in); a test holds the two to the same answers. Pure data.
 */

import { MAX_RETRY_AFTER_MS } from './retry.ts';

export const ADAPTIVE = {
  decrease: 0.5,
  increase: 0.05,
  ewmaAlpha: 0.2,
  baselineDrift: 0.02,
  latencyFactor: 3,
  latencyFloorMs: 250,
  maxHoldMs: MAX_RETRY_AFTER_MS,
} as const;

export type AdaptiveParams = typeof ADAPTIVE;

export interface AdaptiveState {
  /** The configured limit E belongs to (another one resets E). */
  limit: number;
  periodMs: number;
  /** The effective limit, fractional; the tick uses floor(E), at least 1. */
  effective: number;
  /** The last decrease (ms). */
  cutAt: number;
  /** The last increase or push-back: an increase needs one clean period after it. */
  calmSince: number;
  /** Nothing is sent before this (a Retry-After), ms. */
  holdUntil: number;
  /** EWMA of attempt durations and its baseline (ms); 0 before the first sample. */
  ewmaMs: number;
  baseMs: number;
}

/** One finished attempt, as adaptive pacing sees it. */
export interface AdaptiveFeedback {
  at: number;
  limit: number;
  periodMs: number;
  /** The response's status; null when the request failed without one. */
  status: number | null;
  /** A 429's or 503's Retry-After, in ms from `at`. */
  retryAfterMs: number | undefined;
  latencyMs: number;
}

export function freshAdaptive(limit: number, periodMs: number, at: number): AdaptiveState {
  return {
    limit,
    periodMs,
    effective: limit,
    cutAt: Number.NEGATIVE_INFINITY,
    calmSince: at,
    holdUntil: 0,
    ewmaMs: 0,
    baseMs: 0,
  };
}

/** The state after one more attempt's outcome. Returns a new object. */
export function adapt(
  prev: AdaptiveState | null,
  f: AdaptiveFeedback,
  p: AdaptiveParams = ADAPTIVE,
): AdaptiveState {
  const s =
    prev !== null && prev.limit === f.limit && prev.periodMs === f.periodMs
      ? { ...prev }
      : freshAdaptive(f.limit, f.periodMs, f.at);
  if (f.status !== null) {
    s.ewmaMs = s.ewmaMs === 0 ? f.latencyMs : s.ewmaMs + p.ewmaAlpha * (f.latencyMs - s.ewmaMs);
    if (s.baseMs === 0 || s.ewmaMs < s.baseMs) s.baseMs = s.ewmaMs;
    else s.baseMs += p.baselineDrift * (s.ewmaMs - s.baseMs);
  }
  const refused = f.status === 429 || f.status === 503 || f.retryAfterMs !== undefined;
  const slow = s.ewmaMs > s.baseMs * p.latencyFactor && s.ewmaMs - s.baseMs > p.latencyFloorMs;
  if (f.retryAfterMs !== undefined)
    s.holdUntil = Math.max(s.holdUntil, f.at + Math.min(f.retryAfterMs, p.maxHoldMs));
  if (refused || slow) {
    if (f.at - s.cutAt >= f.periodMs) {
      s.effective = Math.max(1, s.effective * p.decrease);
      s.cutAt = f.at;
    }
    s.calmSince = f.at;
  } else if (f.status !== null && f.status >= 200 && f.status < 300) {
    if (s.effective < f.limit && f.at - s.calmSince >= f.periodMs) {
      s.effective = Math.min(f.limit, s.effective + Math.max(1, f.limit * p.increase));
      s.calmSince = f.at;
    }
  }
  return s;
}

export interface EffectiveLimit {
  /** The limit the tick plans with now: floor(E), at least 1, at most the configured one. */
  limit: number;
  /** Nothing may be sent before this (ms); 0 when not held. */
  holdUntil: number;
  /** Below the configured limit, or held. */
  backingOff: boolean;
}

/** What the tick plans with: the configured limit, unless adaptive pacing has lowered it. */
export function effectiveLimit(
  state: AdaptiveState | null,
  limit: number,
  periodMs: number,
  now: number,
): EffectiveLimit {
  if (state === null || state.limit !== limit || state.periodMs !== periodMs)
    return { limit, holdUntil: 0, backingOff: false };
  const e = Math.max(1, Math.min(limit, Math.floor(state.effective)));
  const holdUntil = state.holdUntil > now ? state.holdUntil : 0;
  return { limit: e, holdUntil, backingOff: e < limit || holdUntil > 0 };
}

/**
 * A destination's rate limit at an effective limit E: the long-run rate E, and a burst
 * scaled with it (at least E), so a receiver that pushes back is not then hit with a burst.
 */
export function scaledRateLimit<R extends { limit: number; burst?: number | undefined }>(
  rateLimit: R,
  effective: number,
): R {
  if (effective >= rateLimit.limit) return rateLimit;
  const burst =
    rateLimit.burst === undefined
      ? undefined
      : Math.max(effective, Math.floor((rateLimit.burst * effective) / rateLimit.limit));
  return { ...rateLimit, limit: effective, burst };
}
