/**
 * What is sent (docs/api.md "Filters", "Transforms"): a destination's `filter` and
 * `transform`, as written and as answered, and the preview of both. The filter's rules are
 * `@sluice/core`'s (event-filter.ts), the same the fan-out applies; a transform's code is
 * checked in the sandbox it runs in (routes/destinations.ts).
 */

import { FILTER_OPERATORS, filterProblem } from '@sluice/core';
import { z } from 'zod';

export const FilterInput = z
  .record(z.string(), z.unknown())
  .superRefine((filter, ctx) => {
    const problem = filterProblem(filter);
    if (problem !== undefined) ctx.addIssue({ code: 'custom', message: problem });
  })
  .meta({
    description: `A MongoDB-style query document over the event { "type", "payload" } (e.g. { "payload.amount": { "$gte": 100 } }): an event of the destination's eventTypes that does not match it makes no delivery. Operators: ${FILTER_OPERATORS.join(' ')}. At most 4 KiB and 10 levels. null removes it.`,
  });

export const FilterView = z.record(z.string(), z.unknown()).meta({ id: 'EventFilter' });

/** Most bytes of a transform's code. */
const MAX_TRANSFORM_CODE_BYTES = 64 * 1_024;

export const TransformInput = z
  .strictObject({
    code: z
      .string()
      .min(1)
      .refine(
        (code) => Buffer.byteLength(code) <= MAX_TRANSFORM_CODE_BYTES,
        `at most ${MAX_TRANSFORM_CODE_BYTES} bytes`,
      )
      .meta({
        description:
          'JavaScript defining function handler(webhook): it receives { type, payload, headers } and returns { payload, headers? } or { cancel: true }.',
      }),
  })
  .meta({
    description:
      'Reshapes what is sent, at each attempt, in a sandbox (docs/api.md "Transforms"). Checked on write: code that does not compile or defines no handler is a 400 at transform.code with its line. null removes it.',
  });

export const TransformView = z.object({ code: z.string() }).meta({ id: 'Transform' });

export const PreviewBody = z
  .strictObject({
    type: z.string().min(1).max(200),
    payload: z.unknown().refine((v) => v !== undefined, 'is required'),
    filter: FilterInput.nullable()
      .optional()
      .meta({ description: "Tried instead of the destination's own (null: none); absent: its own." }),
    transform: TransformInput.nullable()
      .optional()
      .meta({ description: "Tried instead of the destination's own (null: none); absent: its own." }),
  })
  .meta({ id: 'PreviewRequest' });

export const Preview = z
  .object({
    matches: z.boolean().meta({ description: 'The event is of its eventTypes and passes its filter.' }),
    request: z
      .object({
        headers: z.record(z.string(), z.string()),
        body: z.unknown(),
      })
      .nullable()
      .meta({
        description:
          "What would be sent, before signing: the headers (content-type and the destination's own headers as the transform left them; credentials and webhook-* are added at the attempt) and the body. null: nothing would be (no match, a cancel, an error).",
      }),
    error: z
      .object({
        code: z.enum(['transform_failed', 'transform_cancelled']),
        message: z.string(),
      })
      .nullable(),
  })
  .meta({ id: 'Preview' });
