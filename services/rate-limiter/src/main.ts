/**
 * The rate limiter service: `node services/rate-limiter/src/main.ts` with `DATABASE_URL` and
 * `REDIS_URL`; run any number. Serves `/healthz`, `/readyz` and `/metrics` on `PORT`; on
 * SIGTERM stops claiming ticks, lets the running ones settle (no lease is left behind) and
 * exits.
 */

import { runService } from '@sluice/service';
import { startRateLimiter } from './app.ts';
import { rateLimiterConfigSchema } from './config.ts';

await runService({
  name: 'sluice-rate-limiter',
  schema: rateLimiterConfigSchema,
  start: startRateLimiter,
});
