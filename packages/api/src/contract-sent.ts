/**
 * What is sent (docs/api.md "Filters"): a destination's `filter`, as written and as answered.
 * The rules are `@sluice/core`'s (event-filter.ts), the same the fan-out applies.
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
