/**
 * The delivery worker service: `node services/delivery-worker/src/main.ts` with
 * `DATABASE_URL` and `REDIS_URL`; stateless, run any number (scaled by the delivery queue's
 * depth). Serves `/healthz`, `/readyz` and `/metrics` on `PORT`; on SIGTERM takes no new job,
 * finishes the requests in flight, writes their outcomes and exits.
 */

import { loadOrExit } from '@sluice/config';
import { drainOnSignal } from '@sluice/engine';
import { PostgresStore } from '@sluice/store-postgres';
import { pino } from 'pino';
import { startDeliveryWorkerService } from './app.ts';
import { deliveryWorkerConfigSchema } from './config.ts';

const config = loadOrExit(deliveryWorkerConfigSchema, 'sluice-delivery-worker');
const logger = pino({ level: config.SLUICE_LOG_LEVEL, base: { service: 'sluice-delivery-worker' } });
const store = await PostgresStore.open(config.DATABASE_URL, {
  poolSize: config.SLUICE_PG_POOL_SIZE,
  poolMin: config.SLUICE_PG_POOL_MIN,
  genericPoolMin: config.SLUICE_PG_POOL_MIN, // the completions' connections (Db.generic)
  applicationName: 'sluice-delivery-worker',
});
const worker = await startDeliveryWorkerService(config, { store, logger });
logger.info({ url: worker.url }, 'listening');
drainOnSignal(logger, config.SLUICE_SHUTDOWN_TIMEOUT_MS, async () => {
  await worker.close();
  await store.close();
});
