/**
 * The distributed shape as separate processes against one Postgres and one Redis server
 * (docs/adr/0002-distributed-shape.md): the behavioural core in helpers/distributed-suite.ts.
 * Runs in the distributed shape only (`SLUICE_TEST_SHAPE=distributed`).
 */

import { describe } from 'node:test';
import { distributedSuite } from './helpers/distributed-suite.ts';
import { SHAPE } from './helpers/shape.ts';

const skip = SHAPE !== 'distributed' && 'distributed shape only (SLUICE_TEST_SHAPE=distributed)';

describe('the distributed shape, as processes', { skip }, () => {
  distributedSuite(() => ({}));
});
