/**
 * What the tests and the bench share to run against real servers (`@sluice/testing`, a
 * test-only package no production package depends on):
 *
 * - the shared Redis and PostgreSQL the unit tests use, with a key prefix or a schema of each
 *   test's own (test-redis.ts, test-postgres.ts): a test that needs one and finds none fails,
 *   saying how to start it (required.ts);
 * - servers of a test's or a bench session's own, which it may kill and start again: a Redis
 *   (private-redis.ts), a Redis Cluster (private-cluster.ts), a PostgreSQL (private-postgres.ts);
 * - a private CA and certificates made with `openssl` for mutual-TLS tests (pki.ts).
 *
 * It depends on no Sluice package but the store's types, so every package's tests may use it
 * without a cycle in the workspace's graph.
 */

export { type Issued, startTestPki, type TestPki } from './pki.ts';
export { type PrivateCluster, startPrivateCluster } from './private-cluster.ts';
export { type PrivatePostgres, startPrivatePostgres } from './private-postgres.ts';
export { type PrivateRedis, startPrivateRedis } from './private-redis.ts';
export { START_POSTGRES, START_REDIS } from './required.ts';
export {
  adminQuery,
  dropSchema,
  findPlanNode,
  freshSchema,
  newEvent,
  type PlanNode,
  requirePostgres,
  schemaClient,
  sqlLiteral,
  TEST_DATABASE_URL,
  withPostgres,
} from './test-postgres.ts';
export {
  claimedDelivery,
  cleanup,
  connect,
  REDIS_TARGET,
  REDIS_URL,
  requireRedis,
  uniquePrefix,
  until,
} from './test-redis.ts';
