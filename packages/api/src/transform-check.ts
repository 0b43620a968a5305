/**
 * A transform's code checked on write (docs/api.md "Transforms"), in the sandbox it will run
 * in: it compiles, its top level runs within the limits, and it defines `handler`; otherwise
 * `400 validation_failed` at `transform.code`, with the line of the error.
 */

import type { ApiContext } from './context.ts';
import { ApiError } from './errors.ts';

export async function checkTransform(
  ctx: ApiContext,
  transform: { code: string } | null | undefined,
): Promise<void> {
  if (transform === null || transform === undefined) return;
  const result = await ctx.transforms.check(transform.code);
  if (result.ok) return;
  const message = result.line === undefined ? result.message : `line ${result.line}: ${result.message}`;
  const detail = {
    path: 'transform.code',
    message,
    code: 'custom',
    ...(result.line === undefined ? {} : { line: result.line }),
  };
  throw new ApiError(400, 'validation_failed', `transform.code: ${message}`, [detail]);
}
