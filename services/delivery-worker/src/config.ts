/** The delivery worker's settings (`.env.example` lists them). */

import { bool, breaker, checkBreaker, checkPool, common, distributed, int } from '@sluice/config';
import { z } from 'zod';

/** The fields, without the checks across them (`.partial()` and `.shape` need a plain object). */
export const deliveryWorkerConfigFields = z.object({
  ...common,
  ...distributed,
  ...breaker,
  PORT: int(0, 65_535).default(3002),
  SLUICE_ALLOW_PRIVATE_NETWORKS: bool.default(false),
  /** Webhook requests one worker process has in flight at once. */
  SLUICE_DELIVERY_CONCURRENCY: int(1, 100_000).default(100),
});

export const deliveryWorkerConfigSchema = deliveryWorkerConfigFields
  .superRefine(checkBreaker)
  .superRefine(checkPool);
