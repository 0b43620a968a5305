/**
 * API errors: `{ "error": { "code", "message", "details" } }` with a stable `code`
 * (docs/api.md "Errors"). A dependency that cannot answer now (the store down or saturated,
 * Redis unreachable: `isUnavailable`) is a 503 `unavailable` with `Retry-After`, never a
 * 500; any other unexpected error is a 500 `internal` (a bug) with no internals in the body;
 * its details go to the log.
 */

import { isUnavailable } from '@sluice/store';
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { hasZodFastifySchemaValidationErrors } from 'fastify-type-provider-zod';
import type { ERROR_CODES } from './contract.ts';

/** A code of `ERROR_CODES` (contract.ts), the one list of them. */
export type ErrorCode = (typeof ERROR_CODES)[number];

/**
 * The `Retry-After` of a 503 `unavailable`, in seconds: long enough that a client's retries
 * do not pile onto a dependency that is restarting, short enough that a blip costs little.
 */
export const RETRY_AFTER_SECONDS = 5;

export class ApiError extends Error {
  readonly status: number;
  readonly code: ErrorCode;
  readonly details: unknown;

  constructor(status: number, code: ErrorCode, message: string, details?: unknown) {
    super(message);
    this.status = status;
    this.code = code;
    this.details = details ?? null;
  }
}

export const notFound = (what: string, id?: string): ApiError =>
  new ApiError(404, 'not_found', `${what} not found`, id === undefined ? null : { id });

/** Where a failed validation was: the body's fields bare, the others prefixed. */
const PREFIX: Record<string, string> = {
  body: '',
  querystring: 'query.',
  params: 'params.',
  headers: 'headers.',
};

/** Fastify's own errors (validation, body parsing, limits) mapped onto our codes. */
function fromFastify(err: FastifyError): ApiError | undefined {
  if (hasZodFastifySchemaValidationErrors(err)) {
    const prefix = PREFIX[err.validationContext ?? 'body'] ?? '';
    const details = err.validation.flatMap((v) => {
      const path = v.instancePath.split('/').filter(Boolean);
      // An unknown field is reported on its parent; name each field instead.
      const keys = v.keyword === 'unrecognized_keys' ? (v.params as { keys?: unknown }).keys : undefined;
      if (Array.isArray(keys) && keys.length > 0) {
        const unknown = prefix === 'query.' ? 'unknown parameter' : 'unknown field';
        return keys.map((key) => ({
          path: prefix + [...path, String(key)].join('.'),
          message: unknown,
          code: v.keyword,
        }));
      }
      return [{ path: prefix + path.join('.'), message: v.message, code: v.keyword }];
    });
    const first = details[0];
    return new ApiError(400, 'validation_failed', `${first?.path || 'body'}: ${first?.message}`, details);
  }
  switch (err.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new ApiError(413, 'payload_too_large', 'request body too large');
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new ApiError(400, 'validation_failed', 'content-type must be application/json', [
        { path: 'headers.content-type', message: 'must be application/json' },
      ]);
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return new ApiError(400, 'validation_failed', 'body must be a JSON document', [
        { path: '', message: 'required' },
      ]);
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return new ApiError(400, 'validation_failed', 'body is not valid JSON', [
        { path: '', message: 'malformed JSON' },
      ]);
    // The router's: a path that is not valid percent-encoding, and a path parameter over the
    // router's limit (set at Node's header limit, so only `inject` reaches it).
    case 'FST_ERR_BAD_URL':
      return new ApiError(400, 'validation_failed', "the URL's path is not valid percent-encoding", [
        { path: 'url', message: 'malformed percent-encoding' },
      ]);
    case 'FST_ERR_MAX_PARAM_LENGTH':
      return new ApiError(400, 'validation_failed', 'a path parameter is too long', [
        { path: 'params', message: 'too long' },
      ]);
  }
  if (err instanceof SyntaxError || (err.statusCode === 400 && /JSON/i.test(err.message))) {
    return new ApiError(400, 'validation_failed', 'body is not valid JSON', [
      { path: '', message: 'malformed JSON' },
    ]);
  }
  if (err.statusCode !== undefined && err.statusCode >= 400 && err.statusCode < 500) {
    return new ApiError(err.statusCode, 'validation_failed', err.message);
  }
  return undefined;
}

/** The error handler; `onUnavailable` counts the 503s (`sluice_api_unavailable_total`). */
export function errorHandler(onUnavailable: () => void) {
  return (err: FastifyError, request: FastifyRequest, reply: FastifyReply): void => {
    const apiError = err instanceof ApiError ? err : fromFastify(err);
    if (apiError !== undefined) {
      if (apiError.code === 'unavailable') void reply.header('retry-after', String(RETRY_AFTER_SECONDS));
      void reply
        .status(apiError.status)
        .send({ error: { code: apiError.code, message: apiError.message, details: apiError.details } });
      return;
    }
    if (isUnavailable(err)) {
      onUnavailable();
      request.log.warn({ err, url: request.url }, 'a dependency is unavailable');
      void reply
        .status(503)
        .header('retry-after', String(RETRY_AFTER_SECONDS))
        .send({
          error: {
            code: 'unavailable',
            message: 'a dependency is unavailable; retry later',
            details: { retryAfterSeconds: RETRY_AFTER_SECONDS },
          },
        });
      return;
    }
    request.log.error({ err, url: request.url }, 'internal error');
    void reply.status(500).send({ error: { code: 'internal', message: 'internal error', details: null } });
  };
}
