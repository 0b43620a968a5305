/** The rate limiter's settings (`.env.example` lists them). */

import { alerts, checkAlerts, checkPool, common, distributed, int, ticking } from '@sluice/config';
import { z } from 'zod';

/** The fields, without the checks across them (`.partial()` and `.shape` need a plain object). */
export const rateLimiterConfigFields = z.object({
  ...common,
  ...distributed,
  ...alerts,
  ...ticking,
  PORT: int(0, 65_535).default(3001),
  SLUICE_SWEEP_INTERVAL_MS: int(100, 3_600_000).default(5_000),
  SLUICE_LEASE_MS: int(1_000, 86_400_000).default(120_000),
  SLUICE_RETENTION_DAYS: int(1, 3650).default(14),
});

/** With the checks across variables (an alert URL needs its secret; the pool's kept connections fit in it). */
export const rateLimiterConfigSchema = rateLimiterConfigFields
  .superRefine(checkAlerts)
  .superRefine(checkPool);
