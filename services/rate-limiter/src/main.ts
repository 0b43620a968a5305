/**
 * The rate limiter service: `node services/rate-limiter/src/main.ts` with `DATABASE_URL` and
 * `REDIS_URL`; run any number. Serves `/healthz`, `/readyz` and `/metrics` on `PORT`; on
 * SIGTERM stops claiming ticks, lets the running ones settle (no lease is left behind) and
 * exits.
 */

import { loadOrExit } from '@sluice/config';
import { drainOnSignal } from '@sluice/engine';
import { PostgresStore } from '@sluice/store-postgres';
import { pino } from 'pino';
import { startRateLimiter } from './app.ts';
import { rateLimiterConfigSchema } from './config.ts';

const config = loadOrExit(rateLimiterConfigSchema, 'sluice-rate-limiter');
const logger = pino({ level: config.SLUICE_LOG_LEVEL, base: { service: 'sluice-rate-limiter' } });
const store = await PostgresStore.open(config.DATABASE_URL, {
  poolSize: config.SLUICE_PG_POOL_SIZE,
  poolMin: config.SLUICE_PG_POOL_MIN,
  genericPoolMin: config.SLUICE_PG_POOL_MIN, // the claims' connections (Db.generic)
  applicationName: 'sluice-rate-limiter',
});
const limiter = await startRateLimiter(config, { store, logger });
logger.info({ url: limiter.url }, 'listening');
drainOnSignal(logger, config.SLUICE_SHUTDOWN_TIMEOUT_MS, async () => {
  await limiter.close();
  await store.close();
});
