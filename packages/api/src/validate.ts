import type { z } from 'zod';
import { ApiError, validationError } from './errors.ts';

/** Parses `value` with `schema` or throws a 400 `validation_failed` naming each bad field. */
export function parse<S extends z.ZodType>(
  schema: S,
  value: unknown,
  prefix: (string | number)[] = [],
): z.infer<S> {
  if (value === undefined || value === null) {
    throw new ApiError(400, 'validation_failed', 'body must be a JSON object', [
      { path: '', message: 'required' },
    ]);
  }
  const result = schema.safeParse(value);
  if (!result.success) throw validationError(result.error, prefix);
  return result.data;
}
