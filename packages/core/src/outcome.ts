/**
 * What one attempt's result means for its delivery and its destination.
 * Errors carry a stable code (undici's `UND_ERR_*`, node's `ECONNREFUSED`, or ours such as
 * `destination_not_allowed`), typed by stage as Outpost does.
 */

import type { DeliveryTransition } from './delivery-state.ts';
import { parseRetryAfter, type RetryPolicy, retryDelayMs } from './retry.ts';

export type AttemptResult =
  | { kind: 'response'; statusCode: number; retryAfter?: string | undefined }
  | { kind: 'error'; code: string; message: string };

export interface AttemptOutcome {
  /** `cancel`: its destination's transform cancelled it, no request made (never decided here). */
  transition: Extract<DeliveryTransition, 'succeed' | 'retry' | 'disable' | 'exhaust' | 'cancel'>;
  /** When the next attempt is due (retry, disable: due at once when re-enabled). */
  nextAttemptAt: number | null;
  /** The destination must be disabled (the receiver answered 410 Gone). */
  disableDestination: boolean;
}

export function isSuccess(result: AttemptResult): boolean {
  return result.kind === 'response' && result.statusCode >= 200 && result.statusCode < 300;
}

/**
 * @param attemptsMade attempts of this delivery so far, this one included (1-based).
 */
export function decideOutcome(
  result: AttemptResult,
  attemptsMade: number,
  policy: RetryPolicy,
  now: number,
  random: () => number,
): AttemptOutcome {
  if (isSuccess(result)) return { transition: 'succeed', nextAttemptAt: null, disableDestination: false };
  if (result.kind === 'response' && result.statusCode === 410) {
    return { transition: 'disable', nextAttemptAt: now, disableDestination: true };
  }
  if (attemptsMade >= policy.maxAttempts) {
    return { transition: 'exhaust', nextAttemptAt: null, disableDestination: false };
  }
  const honoursRetryAfter =
    result.kind === 'response' && (result.statusCode === 429 || result.statusCode === 503);
  const retryAfterMs = honoursRetryAfter ? parseRetryAfter(result.retryAfter, now) : undefined;
  const delay = retryDelayMs(policy, attemptsMade, random, retryAfterMs);
  return { transition: 'retry', nextAttemptAt: now + delay, disableDestination: false };
}
