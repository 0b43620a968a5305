import { ErrorBody } from './contract.ts';
import { ApiError } from './errors.ts';

export { ApiError };

/** The error responses a route documents, all with the one error body (503: a dependency is down). */
export function errorResponses(...statuses: number[]): Record<number, typeof ErrorBody> {
  const out: Record<number, typeof ErrorBody> = {};
  for (const status of [400, 401, ...statuses, 500, 503]) out[status] = ErrorBody;
  return out;
}
