/**
 * The API service: `node services/api/src/main.ts` with `DATABASE_URL`, `REDIS_URL` and
 * `SLUICE_ADMIN_TOKEN`. Migrates Postgres (under an advisory lock: replicas may start
 * together), serves the API, and on SIGTERM stops accepting and finishes its requests.
 */

import { loadOrExit } from '@sluice/config';
import { drainOnSignal } from '@sluice/engine';
import { PostgresStore } from '@sluice/store-postgres';
import { pino } from 'pino';
import { startApiService } from './app.ts';
import { apiConfigSchema } from './config.ts';

const config = loadOrExit(apiConfigSchema, 'sluice-api');
const logger = pino({ level: config.SLUICE_LOG_LEVEL, base: { service: 'sluice-api' } });
const store = await PostgresStore.open(config.DATABASE_URL, {
  poolSize: config.SLUICE_PG_POOL_SIZE,
  poolMin: config.SLUICE_PG_POOL_MIN,
  genericPoolMin: config.SLUICE_API_TICKS ? config.SLUICE_PG_POOL_MIN : 0, // its ticks' claims (Db.generic)
  applicationName: 'sluice-api',
});
const api = await startApiService({
  store,
  redisUrl: config.REDIS_URL,
  prefix: config.SLUICE_REDIS_PREFIX,
  adminToken: config.SLUICE_ADMIN_TOKEN,
  logger,
  host: config.HOST,
  port: config.PORT,
  windowMarginMs: config.SLUICE_WINDOW_MARGIN_MS,
  destinationCacheSize: config.SLUICE_DESTINATION_CACHE_SIZE,
  arrivalBoundMs: config.SLUICE_ARRIVAL_BOUND_MS,
  runTicks: config.SLUICE_API_TICKS,
  tickLeadMs: config.SLUICE_TICK_LEAD_MS,
  jobDeliveries: config.SLUICE_JOB_DELIVERIES,
  config: {
    allowPrivateNetworks: config.SLUICE_ALLOW_PRIVATE_NETWORKS,
    maxPayloadBytes: config.SLUICE_MAX_PAYLOAD_BYTES,
    maxRequestBytes: config.SLUICE_MAX_REQUEST_BYTES,
  },
});
logger.info({ url: api.url }, 'sluice api ready');
drainOnSignal(logger, config.SLUICE_SHUTDOWN_TIMEOUT_MS, async () => {
  await api.close();
  await store.close();
});
