/**
 * `npm run test:distributed`: the behavioural suite against the distributed shape, which
 * needs Postgres and Redis. Where either does not answer, it skips the whole run saying so
 * loudly — except in CI (`CI=true`), where a missing server fails it.
 */

import { spawnSync } from 'node:child_process';
import { Redis } from 'ioredis';
import pg from 'pg';
import { DATABASE_URL, REDIS_URL } from './shape.ts';

async function reachable(): Promise<string[]> {
  const missing: string[] = [];
  const client = new pg.Client({ connectionString: DATABASE_URL, connectionTimeoutMillis: 3_000 });
  try {
    await client.connect();
    await client.query('SELECT 1');
  } catch {
    missing.push(`PostgreSQL at ${DATABASE_URL}`);
  } finally {
    await client.end().catch(() => undefined);
  }
  const redis = new Redis(REDIS_URL, {
    lazyConnect: true,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
  });
  try {
    await redis.connect();
    await redis.ping();
  } catch {
    missing.push(`Redis at ${REDIS_URL}`);
  } finally {
    redis.disconnect();
  }
  return missing;
}

const missing = await reachable();
if (missing.length > 0) {
  const what = missing.join(' and ');
  if (process.env.CI === 'true') {
    process.stderr.write(`CI: the distributed suite needs ${what}, which did not answer\n`);
    process.exit(1);
  }
  process.stderr.write(
    `\n*** SKIPPING the distributed-shape suite: ${what} did not answer (CI runs it) ***\n\n`,
  );
  process.exit(0);
}
const files = process.argv.slice(2);
const result = spawnSync(
  process.execPath,
  ['--test', '--test-concurrency=1', ...(files.length > 0 ? files : ['*.test.ts'])],
  { stdio: 'inherit', env: { ...process.env, SLUICE_TEST_SHAPE: 'distributed' } },
);
process.exit(result.status ?? 1);
