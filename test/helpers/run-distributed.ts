/**
 * `npm run test:distributed`: the behavioural suite against the distributed shape, which
 * needs Postgres and Redis. Where either does not answer, it fails before running a test,
 * saying which and how to start it.
 */

import { spawnSync } from 'node:child_process';
import { requirePostgres, requireRedis } from '@sluice/testing';
import { DATABASE_URL, REDIS_URL } from './shape.ts';

const missing = (
  await Promise.allSettled([requirePostgres(DATABASE_URL), requireRedis(REDIS_URL, 'SLUICE_TEST_REDIS_URL')])
).flatMap((probe) => (probe.status === 'rejected' ? [String(probe.reason)] : []));
if (missing.length > 0) {
  process.stderr.write(`\nthe distributed-shape suite cannot run:\n${missing.join('\n')}\n\n`);
  process.exit(1);
}
const files = process.argv.slice(2);
const result = spawnSync(
  process.execPath,
  ['--test', '--test-concurrency=1', ...(files.length > 0 ? files : ['*.test.ts'])],
  { stdio: 'inherit', env: { ...process.env, SLUICE_TEST_SHAPE: 'distributed' } },
);
process.exit(result.status ?? 1);
