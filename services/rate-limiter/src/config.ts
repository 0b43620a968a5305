/** The rate limiter's settings (`.env.example` lists them). */

import { alerts, checkAlerts, checkPool, common, distributed, int, sweeping, ticking } from '@sluice/config';
import { z } from 'zod';

/** The fields, without the checks across them (`.partial()` and `.shape` need a plain object). */
export const rateLimiterConfigFields = z.object({
  ...common,
  ...distributed,
  ...alerts,
  ...ticking,
  ...sweeping,
  PORT: int(0, 65_535).default(3001),
});

/** With the checks across variables (an alert URL needs its secret; the pool's kept connections fit in it). */
export const rateLimiterConfigSchema = rateLimiterConfigFields
  .superRefine(checkAlerts)
  .superRefine(checkPool);

export type RateLimiterConfig = z.output<typeof rateLimiterConfigSchema>;
