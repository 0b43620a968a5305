/**
 * The API service: `node services/api/src/main.ts` with `DATABASE_URL`, `REDIS_URL` and
 * `SLUICE_ADMIN_TOKEN`. Migrates Postgres (under an advisory lock: replicas may start
 * together), serves the API, and on SIGTERM stops accepting and finishes its requests.
 */

import { runService } from '@sluice/service';
import { startApiService } from './app.ts';
import { apiConfigSchema } from './config.ts';

await runService({
  name: 'sluice-api',
  schema: apiConfigSchema,
  // Its ticks' claims run on Db.generic; without SLUICE_API_TICKS nothing does.
  genericPoolMin: (config) => (config.SLUICE_API_TICKS ? config.SLUICE_PG_POOL_MIN : 0),
  start: startApiService,
});
