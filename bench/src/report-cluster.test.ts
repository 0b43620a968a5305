/** The cluster's row of the distributed targets, over synthetic runs. */

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { CLUSTER_TARGETS } from './report-cluster.ts';
import type { Cells, RunRecord } from './report-rows.ts';

const run = (target: string, deliveriesPerS: number, session = 's1') =>
  ({ target, scenario: 'throughput', session, deliveriesPerS }) as unknown as RunRecord;
const judge = (cells: Cells) => (CLUSTER_TARGETS[0] as (typeof CLUSTER_TARGETS)[number]).judge(cells);

test('cluster throughput is judged against the single Redis at 0.8 ×', () => {
  const cells: Cells = new Map([
    ['throughput/sluice-distributed', [run('sluice-distributed', 1000), run('sluice-distributed', 1200)]],
    ['throughput/sluice-cluster', [run('sluice-cluster', 850), run('sluice-cluster', 900)]],
  ]);
  assert.deepEqual(judge(cells), { measured: '875 vs 1100 deliveries/s = 0.8 ×', met: false });
  cells.set('throughput/sluice-cluster', [run('sluice-cluster', 900, 's2')]);
  assert.deepEqual(judge(cells), {
    measured: '900 vs 1100 deliveries/s = 0.82 × (measured in different sessions)',
    met: true,
  });
  assert.equal(judge(new Map()).met, null);
});
