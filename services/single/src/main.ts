/**
 * `npm start`: Sluice on one box. Reads the environment, starts the API, the engine and the
 * SQLite store, and drains on SIGTERM/SIGINT: stop accepting, stop ticking, finish the
 * requests in flight, write their outcomes, exit 0.
 */

import { resolve } from 'node:path';
import { pino } from 'pino';
import { startSingleBox } from './app.ts';
import { ConfigError, loadConfig } from './config.ts';

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

const box = await startSingleBox({
  dataDir,
  port: config.PORT,
  host: config.HOST,
  adminToken: config.SLUICE_ADMIN_TOKEN,
  allowPrivateNetworks: config.SLUICE_ALLOW_PRIVATE_NETWORKS,
  sweepIntervalMs: config.SLUICE_SWEEP_INTERVAL_MS,
  leaseMs: config.SLUICE_LEASE_MS,
  logger,
  maxPayloadBytes: config.SLUICE_MAX_PAYLOAD_BYTES,
  maxRequestBytes: config.SLUICE_MAX_REQUEST_BYTES,
  deliveryConcurrency: config.SLUICE_DELIVERY_CONCURRENCY,
  windowMarginMs: config.SLUICE_WINDOW_MARGIN_MS,
  arrivalBoundMs: config.SLUICE_ARRIVAL_BOUND_MS,
  synchronous: config.SLUICE_SQLITE_SYNCHRONOUS,
  retentionDays: config.SLUICE_RETENTION_DAYS,
});

if (box.adminTokenGenerated) {
  logger.info(
    { adminToken: box.adminToken, file: resolve(dataDir, 'admin-token') },
    'generated the admin token',
  );
  process.stderr.write(
    `\n  Sluice admin token (shown once, kept in ${resolve(dataDir, 'admin-token')}):\n  ${box.adminToken}\n\n`,
  );
}
logger.info({ url: box.url, dataDir, privateNetworks: config.SLUICE_ALLOW_PRIVATE_NETWORKS }, 'sluice ready');

let stopping = false;
async function shutdown(signal: string): Promise<void> {
  if (stopping) return;
  stopping = true;
  logger.info({ signal }, 'draining');
  const timer = setTimeout(() => {
    logger.error({ timeoutMs: config.SLUICE_SHUTDOWN_TIMEOUT_MS }, 'drain timed out; exiting');
    process.exit(1);
  }, config.SLUICE_SHUTDOWN_TIMEOUT_MS);
  timer.unref();
  await box.close();
  logger.info('stopped');
  process.exit(0);
}
process.on('SIGTERM', () => void shutdown('SIGTERM'));
process.on('SIGINT', () => void shutdown('SIGINT'));
