/**
 * Every failure the client reports is a `SluiceError`. An answer from the server carries
 * its HTTP `status` and the API's stable `code` (`validation_failed`, `unauthorized`,
 * `not_found`, …), `message` and `details`. A request that got no answer has `status` 0 and
 * a client-side code: `timeout` (the client's timeout passed), `aborted` (the caller's
 * signal), `network_error` (no connection, reset, DNS…), with the original error as `cause`.
 * An answer that is not the API's error body (a proxy's HTML page, say) is `unexpected_response`.
 * An answer with `Retry-After` (`429 rate_limited`: a tenant quota; `503`) carries it as
 * `retryAfterSeconds`.
 */

import type { ErrorBody } from './types.ts';

/** Codes the client itself produces, next to the server's. */
export type ClientErrorCode = 'timeout' | 'aborted' | 'network_error' | 'unexpected_response';

/**
 * The server's codes (docs/api.md "Errors"), as the API's document lists them; a newer
 * server may answer others, so `SluiceError.code` takes any string too.
 */
export type ServerErrorCode = ErrorBody['error']['code'];

/** One entry of a `validation_failed` error's `details`. */
export interface ValidationIssue {
  /** Where: a body field as a bare dotted path (`rateLimit.limit`), `query.limit`, `params.id`. */
  path: string;
  message: string;
  code?: string;
}

export interface SluiceErrorInit {
  status: number;
  code: string;
  message: string;
  details?: unknown;
  method: string;
  url: string;
  cause?: unknown;
  retryAfterSeconds?: number | null;
}

/** `Retry-After` in seconds: delay-seconds, or an HTTP date from `now`; null when absent or unreadable. */
export function parseRetryAfterHeader(value: string | null, now = Date.now()): number | null {
  if (value === null || value.trim() === '') return null;
  if (/^\d+$/.test(value.trim())) return Number(value.trim());
  const at = Date.parse(value);
  return Number.isNaN(at) ? null : Math.max(0, Math.ceil((at - now) / 1_000));
}

export class SluiceError extends Error {
  override readonly name = 'SluiceError';
  /** The HTTP status, or 0 when no answer arrived. */
  readonly status: number;
  /** A stable, machine-readable code: the server's `error.code`, or a `ClientErrorCode`. */
  readonly code: ServerErrorCode | ClientErrorCode | (string & {});
  /** The server's `error.details` (for `validation_failed`: `ValidationIssue[]`), else null. */
  readonly details: unknown;
  /** The request that failed, for logs. */
  readonly method: string;
  readonly url: string;
  /** The answer's `Retry-After`, in seconds (on a 429 or 503: when to try again), else null. */
  readonly retryAfterSeconds: number | null;

  constructor(init: SluiceErrorInit) {
    super(init.message, init.cause === undefined ? undefined : { cause: init.cause });
    this.status = init.status;
    this.code = init.code;
    this.details = init.details ?? null;
    this.method = init.method;
    this.url = init.url;
    this.retryAfterSeconds = init.retryAfterSeconds ?? null;
  }

  /** The validation issues of a `validation_failed` error; empty for any other error. */
  get issues(): ValidationIssue[] {
    if (this.code !== 'validation_failed' || !Array.isArray(this.details)) return [];
    return this.details.filter(
      (d): d is ValidationIssue => typeof d === 'object' && d !== null && typeof d.path === 'string',
    );
  }
}

/** True for a `SluiceError`, optionally of one code: `isSluiceError(err, 'not_found')`. */
export function isSluiceError(err: unknown, code?: string): err is SluiceError {
  return err instanceof SluiceError && (code === undefined || err.code === code);
}
