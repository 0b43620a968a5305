/**
 * Endpoint health: a circuit breaker per destination, not a kill switch (ADR 0007).
 *
 *   healthy ──breaker failures: consecutive ≥ degradeAfter, or the window's ratio──▶ degraded
 *   healthy | degraded ──consecutive ≥ suspendAfter ('consecutive'), or the window's
 *                        ratio ≥ windowSuspendPercent ('failure_rate')──────────────▶ suspended
 *   suspended ──a failed probe──▶ suspended (the next probe waits twice as long, up to a cap)
 *   any ──one success (2xx)──▶ healthy (or degraded while the window's ratio is still over)
 *   suspended ──one success──▶ healthy, with a clean slate (counters and window reset)
 *
 * - Breaker failures are the classes that say the endpoint is down or sick: a refused or
 *   reset connection, DNS, a timeout (408 included), TLS, a 5xx. A 4xx, a 429 and a 3xx say
 *   it is up (it answered): they neither count nor reset; a 2xx resets.
 * - The window counts attempts only while it holds a failure: it opens at a breaker failure
 *   and closes `windowMs` later, so a destination that never fails writes nothing. Its ratio
 *   is what opens the circuit of a receiver that fails most requests but answers a few:
 *   each success resets the count in a row, not the window.
 * - Without a success the state only ever rises; a success lowers it to what the trailing
 *   failures (after the batch's last success) and the window say.
 * - Suspended: the rate limiter sends nothing but one probe (a real delivery) when
 *   `nextProbeAt` comes; a failed probe sets the next one `probeInitialMs × 2^k` later
 *   (k failed probes so far), at most `probeMaxMs`.
 *
 * Results arrive in batches (the completion writer's): `nextHealth` folds one batch's
 * summary (`summarize`) into the state. The Postgres store computes the same function in SQL
 * (one statement, atomic under concurrent writers); the conformance suite checks they agree.
 */

export type HealthState = 'healthy' | 'degraded' | 'suspended';

export const HEALTH_STATES: readonly HealthState[] = ['healthy', 'degraded', 'suspended'];

/** What one attempt's result says about its endpoint. */
export type ErrorClass = 'ok' | 'connection' | 'dns' | 'timeout' | 'tls' | '5xx' | '429' | '4xx' | 'other';

export const ERROR_CLASSES: readonly ErrorClass[] = [
  'ok',
  'connection',
  'dns',
  'timeout',
  'tls',
  '5xx',
  '429',
  '4xx',
  'other',
];

const BREAKER: ReadonlySet<ErrorClass> = new Set(['connection', 'dns', 'timeout', 'tls', '5xx']);

/** The endpoint is down or sick: the classes that open the circuit. */
export function isBreakerClass(c: ErrorClass): boolean {
  return BREAKER.has(c);
}

const DNS = /^(ENOTFOUND|EAI_)/;
const TIMEOUT = /^(timeout|ETIMEDOUT|UND_ERR_(CONNECT|HEADERS|BODY)_TIMEOUT)$/;
const TLS =
  /^(ERR_TLS_|ERR_SSL_|CERT_|EPROTO$|DEPTH_ZERO_SELF_SIGNED_CERT$|SELF_SIGNED_CERT_IN_CHAIN$|UNABLE_TO_)/;

/** The class of an attempt from what the attempt record keeps: its status or error code. */
export function classifyAttempt(statusCode: number | null, errorCode: string | null): ErrorClass {
  if (statusCode !== null) {
    if (statusCode >= 200 && statusCode < 300) return 'ok';
    if (statusCode === 408) return 'timeout';
    if (statusCode === 429) return '429';
    if (statusCode >= 500) return '5xx';
    if (statusCode >= 400) return '4xx';
    return 'other';
  }
  if (errorCode === null) return 'other';
  // Our SSRF guard refused the address: a policy decision, not the endpoint being down.
  if (errorCode === 'destination_not_allowed') return 'other';
  // The token endpoint failed (OAuth2), not the receiver: no request reached it.
  if (errorCode === 'auth_failed') return 'other';
  // The destination's transform failed or cancelled it (engine transform-output.ts): no request was made.
  if (errorCode === 'transform_failed' || errorCode === 'transform_cancelled') return 'other';
  if (DNS.test(errorCode)) return 'dns';
  if (TIMEOUT.test(errorCode)) return 'timeout';
  if (TLS.test(errorCode)) return 'tls';
  // ECONNREFUSED, ECONNRESET, EHOSTUNREACH, UND_ERR_SOCKET, …: the connection failed.
  return 'connection';
}

/** Operator settings (SLUICE_BREAKER_*). */
export interface HealthPolicy {
  /** Consecutive breaker failures that make a healthy destination degraded. */
  degradeAfter: number;
  /** Consecutive breaker failures that suspend it (greater than degradeAfter). */
  suspendAfter: number;
  /** How long the failure window stays open after the failure that opened it. */
  windowMs: number;
  /** The least attempts in the window before its ratio counts. */
  windowMinAttempts: number;
  /** The share of breaker failures in the window (percent) that makes it degraded. */
  windowFailurePercent: number;
  /** The share of breaker failures in the window (percent) that suspends it (≥ windowFailurePercent). */
  windowSuspendPercent: number;
  /** The first probe after a suspension, and the base of the doubling. */
  probeInitialMs: number;
  /** The longest wait between two probes. */
  probeMaxMs: number;
}

export const DEFAULT_HEALTH_POLICY: Readonly<HealthPolicy> = {
  degradeAfter: 3,
  suspendAfter: 10,
  windowMs: 60_000,
  windowMinAttempts: 20,
  windowFailurePercent: 50,
  windowSuspendPercent: 70,
  probeInitialMs: 5_000,
  probeMaxMs: 600_000,
};

export interface Health {
  state: HealthState;
  /** When the current state began; null: healthy since the destination was created. */
  since: number | null;
  consecutiveFailures: number;
  windowStart: number;
  windowAttempts: number;
  windowFailures: number;
  /** Failed probes since the suspension. */
  probeFailures: number;
  /** Suspended only: when the next probe may go. */
  nextProbeAt: number | null;
  /** The class of the last breaker failure. */
  lastErrorClass: ErrorClass | null;
  /** Suspended only: what opened the circuit, failures in a row or the window's ratio. */
  suspendReason: SuspendReason | null;
}

export type SuspendReason = 'consecutive' | 'failure_rate';

export const SUSPEND_REASONS: readonly SuspendReason[] = ['consecutive', 'failure_rate'];

/** The share of breaker failures in the open window (0–1, to 3 places); null when no window is open. */
export function failureRate(h: Pick<Health, 'windowAttempts' | 'windowFailures'>): number | null {
  if (h.windowAttempts <= 0 || h.windowFailures <= 0) return null;
  return Math.round((h.windowFailures / h.windowAttempts) * 1_000) / 1_000;
}

export const HEALTHY: Readonly<Health> = {
  state: 'healthy',
  since: null,
  consecutiveFailures: 0,
  windowStart: 0,
  windowAttempts: 0,
  windowFailures: 0,
  probeFailures: 0,
  nextProbeAt: null,
  lastErrorClass: null,
  suspendReason: null,
};

/** One destination's results in one batch, in completion order, summed up. */
export interface HealthBatch {
  attempts: number;
  /** Breaker failures. */
  failures: number;
  successes: number;
  /** Breaker failures after the last success (all of them when there is none). */
  trailingFailures: number;
  /** Probes that did not succeed. */
  failedProbes: number;
  /** The class of the batch's last breaker failure. */
  lastErrorClass: ErrorClass | null;
  /** The receiver answered 410 Gone (the destination is disabled, not suspended). */
  gone: boolean;
}

export interface ClassifiedResult {
  errorClass: ErrorClass;
  probe: boolean;
  gone?: boolean;
}

export function summarize(results: readonly ClassifiedResult[]): HealthBatch {
  const b: HealthBatch = {
    attempts: 0,
    failures: 0,
    successes: 0,
    trailingFailures: 0,
    failedProbes: 0,
    lastErrorClass: null,
    gone: false,
  };
  for (const r of results) {
    b.attempts++;
    if (r.gone) b.gone = true;
    if (r.errorClass === 'ok') {
      b.successes++;
      b.trailingFailures = 0;
      continue;
    }
    if (r.probe) b.failedProbes++;
    if (isBreakerClass(r.errorClass)) {
      b.failures++;
      b.trailingFailures++;
      b.lastErrorClass = r.errorClass;
    }
  }
  return b;
}

const RANK: Record<HealthState, number> = { healthy: 0, degraded: 1, suspended: 2 };

/** The wait before the next probe after `failedProbes` failed ones. */
export function probeDelayMs(policy: HealthPolicy, failedProbes: number): number {
  return Math.min(policy.probeMaxMs, policy.probeInitialMs * 2 ** failedProbes);
}

/**
 * Whether a batch changes anything a reader sees: a healthy destination with no failure on
 * record and a batch of successes and answered errors writes nothing (the hot path).
 */
export function healthMoves(h: Health, b: HealthBatch, now: number, policy: HealthPolicy): boolean {
  if (b.failures > 0 || b.failedProbes > 0) return true;
  if (b.successes === 0) return false;
  return h.consecutiveFailures > 0 || h.state !== 'healthy' || windowOpen(h, now, policy);
}

function windowOpen(h: Health, now: number, policy: HealthPolicy): boolean {
  return h.windowFailures > 0 && now < h.windowStart + policy.windowMs;
}

/** The health after one batch of results. */
export function nextHealth(h: Health, b: HealthBatch, now: number, policy: HealthPolicy): Health {
  const closing = b.successes > 0 && h.state === 'suspended';
  let windowStart = 0;
  let windowAttempts = 0;
  let windowFailures = 0;
  if (!closing && windowOpen(h, now, policy)) {
    windowStart = h.windowStart;
    windowAttempts = h.windowAttempts + b.attempts;
    windowFailures = h.windowFailures + b.failures;
  } else if (!closing && b.failures > 0) {
    windowStart = now;
    windowAttempts = b.attempts;
    windowFailures = b.failures;
  }
  const consecutiveFailures = b.successes > 0 ? b.trailingFailures : h.consecutiveFailures + b.failures;
  const windowOver = (percent: number) =>
    windowAttempts >= policy.windowMinAttempts && windowFailures * 100 >= percent * windowAttempts;
  const inARow = consecutiveFailures >= policy.suspendAfter;
  const level: HealthState =
    inARow || windowOver(policy.windowSuspendPercent)
      ? 'suspended'
      : consecutiveFailures >= policy.degradeAfter || windowOver(policy.windowFailurePercent)
        ? 'degraded'
        : 'healthy';
  const state = b.successes > 0 || RANK[level] > RANK[h.state] ? level : h.state;
  const moved = state !== h.state;
  let probeFailures = 0;
  let nextProbeAt: number | null = null;
  let suspendReason: SuspendReason | null = null;
  if (state === 'suspended' && h.state !== 'suspended') {
    nextProbeAt = now + probeDelayMs(policy, 0);
    suspendReason = inARow ? 'consecutive' : 'failure_rate';
  } else if (state === 'suspended') {
    suspendReason = h.suspendReason;
    probeFailures = h.probeFailures + (b.failedProbes > 0 ? 1 : 0);
    nextProbeAt = b.failedProbes > 0 ? now + probeDelayMs(policy, probeFailures) : h.nextProbeAt;
  }
  return {
    state,
    since: moved ? now : h.since,
    consecutiveFailures,
    windowStart,
    windowAttempts,
    windowFailures,
    probeFailures,
    nextProbeAt,
    lastErrorClass: b.lastErrorClass ?? h.lastErrorClass,
    suspendReason,
  };
}

/**
 * An attempt that failed with a breaker class while its destination is (or, with this
 * batch, becomes) degraded or suspended is held: back to `pending`, never `dead`, and it
 * does not count against the delivery's retry budget (nothing dies of an outage). So is a
 * failed probe whatever the state after: it was sent for the breaker, and the circuit may
 * have been closed by hand (a resume, a new URL) while it was out.
 */
export function isHeld(errorClass: ErrorClass, stateAfter: HealthState, probe: boolean): boolean {
  return isBreakerClass(errorClass) && (probe || stateAfter !== 'healthy');
}
