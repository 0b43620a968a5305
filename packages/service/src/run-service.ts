/**
 * What every service's `main.ts` does the same way (CONTRIBUTING.md "House style": `main.ts` is the only
 * place that wires things together; this is the part that is the same in each): parse the
 * settings (a bad one exits 2, naming it), a JSON log tagged with the service's name, the
 * Postgres store with the configured pool, the service started on them, one `listening`
 * line when it serves (what a supervisor or a test waits for), and a drain on SIGTERM/SIGINT
 * that closes the service, then the store.
 */

import { loadOrExit } from '@sluice/config';
import type { Keyring } from '@sluice/core';
import { drainOnSignal } from '@sluice/engine';
import { PostgresStore } from '@sluice/store-postgres';
import { type Logger, pino } from 'pino';
import type { z } from 'zod';

/** The settings `runService` reads itself (every distributed service's schema has them). */
interface ServiceSettings {
  DATABASE_URL: string;
  SLUICE_ENCRYPTION_KEY: Keyring;
  SLUICE_LOG_LEVEL: string;
  SLUICE_SHUTDOWN_TIMEOUT_MS: number;
  SLUICE_PG_POOL_SIZE: number;
  SLUICE_PG_POOL_MIN: number;
}

/**
 * The Postgres store with the configured pool. `genericPoolMin`: the connections kept for
 * the work that runs on `Db.generic` (claims, completions); default the pool's minimum.
 */
export function openStore(
  config: Omit<ServiceSettings, 'SLUICE_LOG_LEVEL' | 'SLUICE_SHUTDOWN_TIMEOUT_MS'>,
  applicationName: string,
  genericPoolMin = config.SLUICE_PG_POOL_MIN,
): Promise<PostgresStore> {
  return PostgresStore.open(config.DATABASE_URL, {
    keyring: config.SLUICE_ENCRYPTION_KEY,
    poolSize: config.SLUICE_PG_POOL_SIZE,
    poolMin: config.SLUICE_PG_POOL_MIN,
    genericPoolMin,
    applicationName,
  });
}

export interface ServiceSpec<S extends z.ZodType<ServiceSettings>> {
  /** `sluice-api`, …: the log's `service`, Postgres' `application_name`, the prefix of a config error. */
  name: string;
  schema: S;
  /** Connections kept for `Db.generic` (default the pool's minimum; 0 where nothing runs there). */
  genericPoolMin?: (config: z.output<S>) => number;
  start(
    config: z.output<S>,
    deps: { store: PostgresStore; logger: Logger },
  ): Promise<{ url: string; close(): Promise<void> }>;
}

export async function runService<S extends z.ZodType<ServiceSettings>>(spec: ServiceSpec<S>): Promise<void> {
  const config = loadOrExit(spec.schema, spec.name);
  const logger = pino({ level: config.SLUICE_LOG_LEVEL, base: { service: spec.name } });
  const store = await openStore(config, spec.name, spec.genericPoolMin?.(config));
  const service = await spec.start(config, { store, logger });
  logger.info({ url: service.url }, 'listening');
  drainOnSignal(logger, config.SLUICE_SHUTDOWN_TIMEOUT_MS, async () => {
    await service.close();
    await store.close();
  });
}
