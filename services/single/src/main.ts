/**
 * `npm start`: Sluice in one process. Neither `DATABASE_URL` nor `REDIS_URL`: the single box
 * on SQLite (`./data/sluice.db`); both: the distributed shape's API, rate limiter and
 * delivery worker over Postgres and Redis. Drains on SIGTERM/SIGINT: stop accepting, stop
 * ticking, finish the requests in flight, write their outcomes, exit 0. A data directory
 * another single box holds, or a port in use, stops the start with a paragraph that says what
 * to do, and exit 1.
 */

import { resolve } from 'node:path';
import { loadOrExit } from '@sluice/config';
import { drainOnSignal } from '@sluice/engine';
import { openStore } from '@sluice/service';
import { ensureDatabase } from '@sluice/store-postgres';
import { pino } from 'pino';
import { startSingleBox } from './app.ts';
import { configSchema, isDistributed } from './config.ts';
import { DataDirInUseError } from './data-dir-lock.ts';
import { startDistributedBox } from './distributed.ts';
import { encryptionKey, KEY_FILE } from './encryption-key.ts';

const env = loadOrExit(configSchema, 'sluice');
const logger = pino({ level: env.SLUICE_LOG_LEVEL, base: { service: 'sluice-single' } });
const dataDir = resolve(process.env.INIT_CWD ?? process.cwd(), env.SLUICE_DATA_DIR);
const config = { ...env, SLUICE_DATA_DIR: dataDir };

async function start(): Promise<{
  url: string;
  adminToken: string;
  adminTokenGenerated: boolean;
  encryptionKeyGenerated: boolean;
  close(): Promise<void>;
}> {
  if (isDistributed(config)) {
    const key = encryptionKey(dataDir, config.SLUICE_ENCRYPTION_KEY);
    const keyed = { ...config, SLUICE_ENCRYPTION_KEY: key.keyring };
    await ensureDatabase(config.DATABASE_URL);
    const store = await openStore(keyed, 'sluice-single');
    const box = await startDistributedBox(keyed, { store, logger });
    return {
      ...box,
      encryptionKeyGenerated: key.generated,
      close: async () => {
        await box.close();
        await store.close();
      },
    };
  }
  return startSingleBox(config, { logger });
}

/**
 * A start refused for a reason the operator fixes (the data directory or the port taken by
 * another process): what to do, in a paragraph, instead of a stack trace.
 */
function refusal(err: unknown): string | undefined {
  if (err instanceof DataDirInUseError) return err.message;
  if (typeof err !== 'object' || err === null) return undefined;
  const e = err as NodeJS.ErrnoException & { address?: string; port?: number };
  if (e.code === 'EADDRINUSE' && e.syscall === 'listen') {
    const where = e.address === undefined ? `port ${config.PORT}` : `${e.address}:${e.port ?? config.PORT}`;
    return (
      `cannot listen on ${where}: another process (another Sluice?) is listening there. ` +
      `Stop it first, or start this one on a port of its own: PORT=<another port>.`
    );
  }
  return undefined;
}

const running = await start().catch((err: unknown) => {
  const message = refusal(err);
  if (message === undefined) throw err;
  logger.fatal({ code: (err as { code?: string }).code }, 'sluice did not start');
  process.stderr.write(`\nsluice: ${message}\n\n`);
  process.exit(1);
});
// One `listening` line per process, as every service's (what a supervisor or a test waits for).
logger.info({ url: running.url }, 'listening');
if (running.adminTokenGenerated) {
  const file = resolve(dataDir, 'admin-token');
  // The token itself goes to the terminal only, never into the log stream.
  logger.info({ file }, 'generated the admin token');
  process.stderr.write(`\n  Sluice admin token (shown once, kept in ${file}):\n  ${running.adminToken}\n\n`);
}
if (running.encryptionKeyGenerated) {
  // The key never goes to the log nor the terminal: it is read from the file.
  logger.warn(
    { file: resolve(dataDir, KEY_FILE) },
    'generated the encryption key of the signing secrets: back it up, apart from the database',
  );
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
