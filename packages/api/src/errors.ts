/**
 * API errors: `{ "error": { "code", "message", "details" } }` with a stable `code`
 * (API.md "Conventions"). An internal error is a 500 with no internals in the body; its
 * details go to the log.
 */

import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import type { ZodError } from 'zod';

export type ErrorCode =
  | 'validation_failed'
  | 'unauthorized'
  | 'forbidden'
  | 'not_found'
  | 'conflict'
  | 'payload_too_large'
  | 'destination_not_allowed'
  | 'rate_limited'
  | 'internal';

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

export function validationError(err: ZodError, prefix: (string | number)[] = []): ApiError {
  const details = err.issues.map((issue) => ({
    path: [...prefix, ...issue.path].map(String).join('.'),
    message: issue.message,
    code: issue.code,
  }));
  const first = details[0];
  const message = first ? `${first.path || 'body'}: ${first.message}` : 'invalid request';
  return new ApiError(400, 'validation_failed', message, details);
}

/** Fastify's own errors (body parsing, limits, routing) mapped onto our codes. */
function fromFastify(err: FastifyError): ApiError | undefined {
  switch (err.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new ApiError(413, 'payload_too_large', 'request body too large');
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new ApiError(400, 'validation_failed', 'content-type must be application/json');
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return new ApiError(400, 'validation_failed', 'body must be a JSON document');
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return new ApiError(400, 'validation_failed', 'body is not valid JSON');
  }
  if (err instanceof SyntaxError || (err.statusCode === 400 && /JSON/i.test(err.message))) {
    return new ApiError(400, 'validation_failed', 'body is not valid JSON');
  }
  if (err.statusCode !== undefined && err.statusCode >= 400 && err.statusCode < 500) {
    return new ApiError(err.statusCode, 'validation_failed', err.message);
  }
  return undefined;
}

export function errorHandler(err: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
  const apiError = err instanceof ApiError ? err : fromFastify(err);
  if (apiError === undefined) {
    request.log.error({ err }, 'internal error');
    void reply.status(500).send({ error: { code: 'internal', message: 'internal error', details: null } });
    return;
  }
  void reply
    .status(apiError.status)
    .send({ error: { code: apiError.code, message: apiError.message, details: apiError.details } });
}
