/**
 * What one attempt tells adaptive pacing about its receiver (docs/adr/0008): its status, a
 * 429's or 503's Retry-After, and how long it took. Only for destinations with `adaptive`;
 * a request that failed without a response carries no signal (its status is null).
 */

import { type AdaptiveFeedback, type AttemptResult, PERIOD_MS, parseRetryAfter } from '@sluice/core';
import type { Destination } from '@sluice/store';

export function adaptiveFeedback(
  destination: Pick<Destination, 'adaptive' | 'rateLimit'>,
  result: AttemptResult | undefined,
  startedAt: number,
  finishedAt: number,
): AdaptiveFeedback | null {
  if (!destination.adaptive || result === undefined) return null;
  const status = result.kind === 'response' ? result.statusCode : null;
  const retryAfterMs =
    result.kind === 'response' && (status === 429 || status === 503)
      ? parseRetryAfter(result.retryAfter, finishedAt)
      : undefined;
  return {
    at: finishedAt,
    limit: destination.rateLimit.limit,
    periodMs: PERIOD_MS[destination.rateLimit.period],
    status,
    retryAfterMs,
    latencyMs: finishedAt - startedAt,
  };
}
