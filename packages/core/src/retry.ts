/**
 * The retry policy: exponential backoff with full jitter (AWS "Exponential Backoff And
 * Jitter"), with `Retry-After` honoured on 429 and 503 and capped.
 *
 * After the n-th failed attempt (n = 1, 2, …) the next one waits a uniformly random time in
 * [0, ceiling(n)), where ceiling(n) = min(maxDelayMs, initialDelayMs × 4^(n−1)).
 * With the defaults (8 attempts, 30 s, 12 h) the ceilings are
 * 30 s, 2 min, 8 min, 32 min, 2 h 8 min, 8 h 32 min, 12 h: the eighth and last attempt
 * comes at most ~23.4 h after the first (about half that on average). docs/retries.md.
 */

export interface RetryPolicy {
  maxAttempts: number;
  initialDelayMs: number;
  maxDelayMs: number;
}

export const DEFAULT_RETRY_POLICY: Readonly<RetryPolicy> = {
  maxAttempts: 8,
  initialDelayMs: 30_000,
  maxDelayMs: 12 * 3_600_000,
};

export const BACKOFF_MULTIPLIER = 4;

/** The most a receiver's `Retry-After` can postpone an attempt. */
export const MAX_RETRY_AFTER_MS = 3_600_000;

export function backoffCeilingMs(policy: RetryPolicy, failedAttempts: number): number {
  const exp = policy.initialDelayMs * BACKOFF_MULTIPLIER ** Math.max(0, failedAttempts - 1);
  return Math.min(policy.maxDelayMs, exp);
}

/**
 * Delay before the next attempt after `failedAttempts` failures. `random` returns [0, 1).
 * `retryAfterMs` (from a 429/503) is a floor, capped at MAX_RETRY_AFTER_MS.
 */
export function retryDelayMs(
  policy: RetryPolicy,
  failedAttempts: number,
  random: () => number,
  retryAfterMs?: number,
): number {
  const jittered = Math.floor(random() * backoffCeilingMs(policy, failedAttempts));
  if (retryAfterMs === undefined) return jittered;
  return Math.max(jittered, Math.min(retryAfterMs, MAX_RETRY_AFTER_MS));
}

/** The three HTTP-date forms of RFC 9110 §5.6.7: IMF-fixdate, RFC 850, asctime. */
const HTTP_DATE = [
  /^[A-Z][a-z]{2}, \d{2} [A-Z][a-z]{2} \d{4} \d{2}:\d{2}:\d{2} GMT$/,
  /^[A-Z][a-z]+, \d{2}-[A-Z][a-z]{2}-\d{2} \d{2}:\d{2}:\d{2} GMT$/,
  /^[A-Z][a-z]{2} [A-Z][a-z]{2} [ \d]\d \d{2}:\d{2}:\d{2} \d{4}$/,
];

/**
 * Parses a `Retry-After` header: delay-seconds or an HTTP-date (RFC 9110 §10.2.3).
 * Returns milliseconds from `now`, or undefined when absent or malformed.
 */
export function parseRetryAfter(value: string | undefined, now: number): number | undefined {
  if (value === undefined) return undefined;
  const trimmed = value.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed) * 1_000;
  if (!HTTP_DATE.some((form) => form.test(trimmed))) return undefined;
  const date = Date.parse(trimmed);
  if (Number.isNaN(date)) return undefined;
  return Math.max(0, date - now);
}
