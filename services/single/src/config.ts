/**
 * The single box's settings, from the environment, parsed once at start. A bad value stops
 * the process with a message naming the variable and what it expected. `.env.example`
 * lists every one.
 */

import { z } from 'zod';

const bool = z.enum(['true', 'false', '1', '0']).transform((v) => v === 'true' || v === '1');
const int = (min: number, max: number) => z.coerce.number().int().min(min).max(max);

export const configSchema = z.object({
  PORT: int(0, 65_535).default(3000),
  HOST: z.string().min(1).default('127.0.0.1'),
  SLUICE_DATA_DIR: z.string().min(1).default('./data'),
  SLUICE_ADMIN_TOKEN: z.string().min(16, 'at least 16 characters').optional(),
  DATABASE_URL: z.string().optional(),
  REDIS_URL: z.string().optional(),
  SLUICE_ALLOW_PRIVATE_NETWORKS: bool.default(false),
  SLUICE_LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  SLUICE_MAX_PAYLOAD_BYTES: int(1, 64 * 1024 * 1024).default(256 * 1024),
  SLUICE_MAX_REQUEST_BYTES: int(1, 256 * 1024 * 1024).default(8 * 1024 * 1024),
  SLUICE_DELIVERY_CONCURRENCY: int(1, 100_000).default(256),
  SLUICE_WINDOW_MARGIN_MS: int(0, 10_000).default(5),
  SLUICE_ARRIVAL_BOUND_MS: int(0, 60_000).default(250),
  SLUICE_SWEEP_INTERVAL_MS: int(100, 3_600_000).default(5_000),
  SLUICE_LEASE_MS: int(1_000, 86_400_000).default(120_000),
  SLUICE_RETENTION_DAYS: int(1, 3650).default(14),
  SLUICE_SQLITE_SYNCHRONOUS: z.enum(['full', 'normal']).default('full'),
  SLUICE_SHUTDOWN_TIMEOUT_MS: int(0, 600_000).default(25_000),
});

export type Config = z.infer<typeof configSchema>;

export class ConfigError extends Error {}

export function loadConfig(env: NodeJS.ProcessEnv): Config {
  const result = configSchema.safeParse(env);
  if (!result.success) {
    const lines = result.error.issues.map(
      (i) => `  ${i.path.join('.')}: ${i.message} (got ${JSON.stringify(env[String(i.path[0])])})`,
    );
    throw new ConfigError(`invalid configuration:\n${lines.join('\n')}`);
  }
  const config = result.data;
  if (Boolean(config.DATABASE_URL) !== Boolean(config.REDIS_URL)) {
    const missing = config.DATABASE_URL ? 'REDIS_URL' : 'DATABASE_URL';
    throw new ConfigError(
      `invalid configuration:\n  ${missing}: required when the other of DATABASE_URL/REDIS_URL is set`,
    );
  }
  if (config.DATABASE_URL && config.REDIS_URL) {
    throw new ConfigError(
      'invalid configuration:\n  DATABASE_URL, REDIS_URL: the distributed shape is not in this build yet; unset both for the single box',
    );
  }
  return config;
}
