/** The delivery worker's settings (`.env.example` lists them). */

import {
  breaker,
  checkBreaker,
  checkPool,
  common,
  distributed,
  int,
  jobs,
  network,
  transforms,
} from '@sluice/config';
import { z } from 'zod';

/** The fields, without the checks across them (`.partial()` and `.shape` need a plain object). */
export const deliveryWorkerConfigFields = z.object({
  ...common,
  ...distributed,
  ...breaker,
  ...network,
  ...transforms,
  ...jobs,
  PORT: int(0, 65_535).default(3002),
  /** Webhook requests one worker process has in flight at once. */
  SLUICE_DELIVERY_CONCURRENCY: int(1, 100_000).default(100),
});

export const deliveryWorkerConfigSchema = deliveryWorkerConfigFields
  .superRefine(checkBreaker)
  .superRefine(checkPool);

export type DeliveryWorkerConfig = z.output<typeof deliveryWorkerConfigSchema>;
