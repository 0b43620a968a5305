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
const api = await startApiService(config, { store, logger });
logger.info({ url: api.url }, 'sluice api ready');
drainOnSignal(logger, config.SLUICE_SHUTDOWN_TIMEOUT_MS, async () => {
  await api.close();
  await store.close();
});
