/** The API service's settings (`.env.example` lists them). */

import {
  api,
  checkPool,
  common,
  distributed,
  ingest,
  int,
  network,
  ticking,
  transforms,
} from '@sluice/config';
import { z } from 'zod';

/** The fields, without the checks across them. */
export const apiConfigFields = z.object({
  ...common,
  ...distributed,
  ...ticking,
  ...api,
  ...network,
  ...transforms,
  ...ingest,
  PORT: int(0, 65_535).default(3000),
  SLUICE_ADMIN_TOKEN: z.string().min(16, 'the operator token, at least 16 characters'),
});

/** With the checks across variables (the pool's kept connections fit in it). */
export const apiConfigSchema = apiConfigFields.superRefine(checkPool);

export type ApiServiceConfig = z.output<typeof apiConfigSchema>;
