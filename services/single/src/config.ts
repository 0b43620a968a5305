/**
 * `npm start`'s settings, from the environment, parsed once at start. A bad value stops
 * the process with a message naming the variable and what it expected. `.env.example`
 * lists every one. Neither `DATABASE_URL` nor `REDIS_URL`: the single box on SQLite; both:
 * the distributed shape's three services in this one process; one alone: a config error
 * (`checkShape`).
 */

import { availableParallelism } from 'node:os';
import {
  alerts,
  api,
  breaker,
  checkAlerts,
  checkBreaker,
  checkPool,
  checkShape,
  common,
  eitherShape,
  ingest,
  int,
  isDistributed,
  jobs,
  network,
  sweeping,
  ticking,
  transforms,
} from '@sluice/config';
import type { Keyring } from '@sluice/core';
import { z } from 'zod';

const configFields = z.object({
  ...common,
  ...eitherShape,
  ...alerts,
  ...breaker,
  ...network,
  ...transforms,
  ...ingest,
  ...sweeping,
  ...ticking,
  ...api,
  ...jobs,
  PORT: int(0, 65_535).default(3000),
  /** Holds `sluice.db` (the single box), `admin-token` and `encryption-key` (both shapes). */
  SLUICE_DATA_DIR: z.string().min(1).default('./data'),
  SLUICE_ADMIN_TOKEN: z.string().min(16, 'at least 16 characters').optional(),
  SLUICE_DELIVERY_CONCURRENCY: int(1, 100_000).default(256),
  /**
   * Single box: threads that make the HTTP requests; 0 = the main thread. Unset: one where
   * there is a second core to run it, none on one core (docs/adr/0011).
   */
  SLUICE_DELIVERY_THREADS: int(0, 64).default(() => (availableParallelism() > 1 ? 1 : 0)),
  SLUICE_SQLITE_SYNCHRONOUS: z.enum(['full', 'normal']).default('full'),
});

/** With the checks across variables (the two URLs go together; an alert URL needs its secret; …). */
export const configSchema = configFields
  .superRefine(checkShape)
  .superRefine(checkAlerts)
  .superRefine(checkBreaker)
  .superRefine(checkPool);

export type Config = z.output<typeof configSchema>;
/**
 * Both URLs set: the distributed shape in this process, with the encryption key resolved
 * (given, or the data directory's: encryption-key.ts).
 */
export type DistributedConfig = Config & {
  DATABASE_URL: string;
  REDIS_URL: string;
  SLUICE_ENCRYPTION_KEY: Keyring;
};

export { isDistributed };
