/** The API service's settings (`.env.example` lists them). */

import { api, bool, checkPool, common, distributed, int, ticking } from '@sluice/config';
import { z } from 'zod';

/** The fields, without the checks across them. */
export const apiConfigFields = z.object({
  ...common,
  ...distributed,
  ...ticking,
  ...api,
  PORT: int(0, 65_535).default(3000),
  SLUICE_ADMIN_TOKEN: z.string().min(16, 'the operator token, at least 16 characters'),
  SLUICE_ALLOW_PRIVATE_NETWORKS: bool.default(false),
  SLUICE_MAX_PAYLOAD_BYTES: int(1, 64 * 1024 * 1024).default(256 * 1024),
  SLUICE_MAX_REQUEST_BYTES: int(1, 256 * 1024 * 1024).default(8 * 1024 * 1024),
});

/** With the checks across variables (the pool's kept connections fit in it). */
export const apiConfigSchema = apiConfigFields.superRefine(checkPool);
