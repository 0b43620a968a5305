/**
 * `npm start`: Sluice in one process. Neither `DATABASE_URL` nor `REDIS_URL`: the single box
 * on SQLite (`./data/sluice.db`); both: the distributed shape's API, rate limiter and
 * delivery worker over Postgres and Redis. Drains on SIGTERM/SIGINT: stop accepting, stop
 * ticking, finish the requests in flight, write their outcomes, exit 0.
 */

import { resolve } from 'node:path';
import { alertSettings, healthPolicy } from '@sluice/config';
import { drainOnSignal } from '@sluice/engine';
import { ensureDatabase, PostgresStore } from '@sluice/store-postgres';
import { pino } from 'pino';
import { adminToken, startSingleBox } from './app.ts';
import { ConfigError, loadConfig } from './config.ts';
import { startDistributedBox } from './distributed.ts';

let config: ReturnType<typeof loadConfig>;
try {
  config = loadConfig(process.env);
} catch (err) {
  if (!(err instanceof ConfigError)) throw err;
  process.stderr.write(`sluice: ${err.message}\n`);
  process.exit(2);
}

const logger = pino({ level: config.SLUICE_LOG_LEVEL, base: { service: 'sluice-single' } });
const dataDir = resolve(process.env.INIT_CWD ?? process.cwd(), config.SLUICE_DATA_DIR);
const apiConfig = {
  allowPrivateNetworks: config.SLUICE_ALLOW_PRIVATE_NETWORKS,
  maxPayloadBytes: config.SLUICE_MAX_PAYLOAD_BYTES,
  maxRequestBytes: config.SLUICE_MAX_REQUEST_BYTES,
};

async function start(): Promise<{ url: string; token: string; generated: boolean; close(): Promise<void> }> {
  if (config.DATABASE_URL && config.REDIS_URL) {
    const admin = adminToken(dataDir, config.SLUICE_ADMIN_TOKEN);
    await ensureDatabase(config.DATABASE_URL);
    const store = await PostgresStore.open(config.DATABASE_URL, {
      poolSize: config.SLUICE_PG_POOL_SIZE,
      poolMin: config.SLUICE_PG_POOL_MIN,
      genericPoolMin: config.SLUICE_PG_POOL_MIN, // the claims' connections (Db.generic)
      applicationName: 'sluice-single',
    });
    const box = await startDistributedBox({
      store,
      redisUrl: config.REDIS_URL,
      prefix: config.SLUICE_REDIS_PREFIX,
      adminToken: admin.token,
      logger,
      config: apiConfig,
      host: config.HOST,
      port: config.PORT,
      deliveryConcurrency: config.SLUICE_DELIVERY_CONCURRENCY,
      windowMarginMs: config.SLUICE_WINDOW_MARGIN_MS,
      destinationCacheSize: config.SLUICE_DESTINATION_CACHE_SIZE,
      arrivalBoundMs: config.SLUICE_ARRIVAL_BOUND_MS,
      sweepIntervalMs: config.SLUICE_SWEEP_INTERVAL_MS,
      leaseMs: config.SLUICE_LEASE_MS,
      tickLeadMs: config.SLUICE_TICK_LEAD_MS,
      jobDeliveries: config.SLUICE_JOB_DELIVERIES,
      apiTicks: config.SLUICE_API_TICKS,
      retentionMs: config.SLUICE_RETENTION_DAYS * 86_400_000,
      alerts: alertSettings(config),
      health: healthPolicy(config),
    });
    return {
      url: box.url,
      token: admin.token,
      generated: admin.generated,
      close: async () => {
        await box.close();
        await store.close();
      },
    };
  }
  const box = await startSingleBox({
    dataDir,
    port: config.PORT,
    host: config.HOST,
    adminToken: config.SLUICE_ADMIN_TOKEN,
    allowPrivateNetworks: config.SLUICE_ALLOW_PRIVATE_NETWORKS,
    sweepIntervalMs: config.SLUICE_SWEEP_INTERVAL_MS,
    leaseMs: config.SLUICE_LEASE_MS,
    tickLeadMs: config.SLUICE_TICK_LEAD_MS,
    logger,
    maxPayloadBytes: config.SLUICE_MAX_PAYLOAD_BYTES,
    maxRequestBytes: config.SLUICE_MAX_REQUEST_BYTES,
    deliveryConcurrency: config.SLUICE_DELIVERY_CONCURRENCY,
    deliveryThreads: config.SLUICE_DELIVERY_THREADS,
    windowMarginMs: config.SLUICE_WINDOW_MARGIN_MS,
    destinationCacheSize: config.SLUICE_DESTINATION_CACHE_SIZE,
    arrivalBoundMs: config.SLUICE_ARRIVAL_BOUND_MS,
    synchronous: config.SLUICE_SQLITE_SYNCHRONOUS,
    retentionDays: config.SLUICE_RETENTION_DAYS,
    alerts: alertSettings(config),
    health: healthPolicy(config),
  });
  return {
    url: box.url,
    token: box.adminToken,
    generated: box.adminTokenGenerated,
    close: () => box.close(),
  };
}

const running = await start();
if (running.generated) {
  const file = resolve(dataDir, 'admin-token');
  // The token itself goes to the terminal only, never into the log stream.
  logger.info({ file }, 'generated the admin token');
  process.stderr.write(`\n  Sluice admin token (shown once, kept in ${file}):\n  ${running.token}\n\n`);
}
logger.info(
  {
    url: running.url,
    shape: config.DATABASE_URL ? 'distributed' : 'single',
    ...(config.DATABASE_URL ? {} : { dataDir }),
    privateNetworks: config.SLUICE_ALLOW_PRIVATE_NETWORKS,
  },
  'sluice ready',
);
drainOnSignal(logger, config.SLUICE_SHUTDOWN_TIMEOUT_MS, () => running.close());
