/**
 * `npm start`'s settings, from the environment, parsed once at start. A bad value stops
 * the process with a message naming the variable and what it expected. `.env.example`
 * lists every one. Neither `DATABASE_URL` nor `REDIS_URL`: the single box on SQLite; both:
 * the distributed shape's three services in this one process; one alone: a config error.
 */

import {
  alerts,
  api,
  bool,
  breaker,
  ConfigError,
  checkAlerts,
  checkBreaker,
  checkPool,
  common,
  distributed,
  int,
  parseEnv,
  postgresUrl,
  redisUrl,
  ticking,
} from '@sluice/config';
import { z } from 'zod';

export { ConfigError };

const configFields = z.object({
  ...common,
  ...alerts,
  ...breaker,
  PORT: int(0, 65_535).default(3000),
  SLUICE_DATA_DIR: z.string().min(1).default('./data'),
  SLUICE_ADMIN_TOKEN: z.string().min(16, 'at least 16 characters').optional(),
  DATABASE_URL: postgresUrl.optional(),
  REDIS_URL: redisUrl.optional(),
  SLUICE_REDIS_PREFIX: z
    .string()
    .regex(/^[A-Za-z0-9_-]{1,64}$/, 'letters, digits, _ and -, at most 64')
    .default('sluice'),
  SLUICE_PG_POOL_SIZE: distributed.SLUICE_PG_POOL_SIZE,
  SLUICE_PG_POOL_MIN: distributed.SLUICE_PG_POOL_MIN,
  SLUICE_ALLOW_PRIVATE_NETWORKS: bool.default(false),
  SLUICE_MAX_PAYLOAD_BYTES: int(1, 64 * 1024 * 1024).default(256 * 1024),
  SLUICE_MAX_REQUEST_BYTES: int(1, 256 * 1024 * 1024).default(8 * 1024 * 1024),
  SLUICE_DELIVERY_CONCURRENCY: int(1, 100_000).default(256),
  /** Single box: threads that make the HTTP requests; 0 = the main thread. Unset: 1 with 2+ cores (app.ts). */
  SLUICE_DELIVERY_THREADS: int(0, 64).optional(),
  SLUICE_WINDOW_MARGIN_MS: int(0, 10_000).default(5),
  SLUICE_ARRIVAL_BOUND_MS: int(0, 60_000).default(250),
  SLUICE_SWEEP_INTERVAL_MS: int(100, 3_600_000).default(5_000),
  SLUICE_LEASE_MS: int(1_000, 86_400_000).default(120_000),
  ...ticking,
  SLUICE_API_TICKS: api.SLUICE_API_TICKS,
  SLUICE_RETENTION_DAYS: int(1, 3650).default(14),
  SLUICE_SQLITE_SYNCHRONOUS: z.enum(['full', 'normal']).default('full'),
});

/** With the checks across variables (an alert URL needs its secret; the pool's kept connections fit in it). */
export const configSchema = configFields
  .superRefine(checkAlerts)
  .superRefine(checkBreaker)
  .superRefine(checkPool);

export type Config = z.infer<typeof configSchema>;

export function loadConfig(env: NodeJS.ProcessEnv): Config {
  const config = parseEnv(configSchema, env);
  if (Boolean(config.DATABASE_URL) !== Boolean(config.REDIS_URL)) {
    const missing = config.DATABASE_URL ? 'REDIS_URL' : 'DATABASE_URL';
    throw new ConfigError(
      `invalid configuration:\n  ${missing}: required when the other of DATABASE_URL/REDIS_URL is set (neither: the single box on SQLite)`,
    );
  }
  return config;
}
