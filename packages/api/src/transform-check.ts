/**
 * A transform's code checked on write (docs/api.md "Transforms"), in the sandbox it will run
 * in: it compiles, its top level runs within the limits, and it defines `handler`; otherwise
 * `400 validation_failed` at `transform.code`, with the line of the error.
 */

import type { ApiContext } from './context.ts';
import { ApiError } from './errors.ts';

export async function checkTransform(
  ctx: ApiContext,
  tenantId: string,
  transform: { code: string } | null | undefined,
): Promise<void> {
  if (transform === null || transform === undefined) return;
  // In its tenant's turn at the sandbox's threads, as that tenant's transforms run.
  const result = await ctx.transforms.check(transform.code, tenantId);
  if (result.ok) return;
  // The sandbox, not the code, failed: an outage (503 with Retry-After), nothing changed.
  if (result.host === true)
    throw new ApiError(503, 'unavailable', `the transform sandbox could not check it: ${result.message}`);
  const message = result.line === undefined ? result.message : `line ${result.line}: ${result.message}`;
  const detail = {
    path: 'transform.code',
    message,
    code: 'custom',
    ...(result.line === undefined ? {} : { line: result.line }),
  };
  throw new ApiError(400, 'validation_failed', `transform.code: ${message}`, [detail]);
}
