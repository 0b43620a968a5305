/**
 * The delivery worker service: `node services/delivery-worker/src/main.ts` with
 * `DATABASE_URL` and `REDIS_URL`; stateless, run any number (scaled by the delivery queue's
 * depth). Serves `/healthz`, `/readyz` and `/metrics` on `PORT`; on SIGTERM takes no new job,
 * finishes the requests in flight, writes their outcomes and exits.
 */

import { runService } from '@sluice/service';
import { startDeliveryWorkerService } from './app.ts';
import { deliveryWorkerConfigSchema } from './config.ts';

await runService({
  name: 'sluice-delivery-worker',
  schema: deliveryWorkerConfigSchema,
  start: startDeliveryWorkerService,
});
