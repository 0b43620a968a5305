/** The cluster's row of the distributed targets, over synthetic runs. */

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { CLUSTER_TARGETS } from './report-cluster.ts';
import type { Cells, RunRecord } from './report-rows.ts';

/** A run; on the cluster, with the processes of 3 masters and `replicas` replicas. */
const run = (target: string, deliveriesPerS: number, session = 's1', replicas = 0) => {
  const nodes =
    target === 'sluice-cluster'
      ? [
          ...[1, 2, 3].map((n) => `redis-master-${n}`),
          ...Array.from({ length: replicas }, (_, n) => `redis-replica-${n + 1}`),
        ]
      : ['redis-server'];
  const processes = Object.fromEntries(nodes.map((n) => [n, { cpuS: 1 }]));
  return { target, scenario: 'throughput', session, deliveriesPerS, processes } as unknown as RunRecord;
};
const judge = (cells: Cells) => (CLUSTER_TARGETS[0] as (typeof CLUSTER_TARGETS)[number]).judge(cells);

test('cluster throughput is judged against the single Redis at 0.8 ×', () => {
  const cells: Cells = new Map([
    ['throughput/sluice-distributed', [run('sluice-distributed', 1000), run('sluice-distributed', 1200)]],
    ['throughput/sluice-cluster', [run('sluice-cluster', 850), run('sluice-cluster', 900)]],
  ]);
  assert.deepEqual(judge(cells), {
    measured: '875 vs 1100 deliveries/s = 0.8 × (3 masters, no replica)',
    met: false,
  });
  cells.set('throughput/sluice-cluster', [run('sluice-cluster', 900, 's2')]);
  assert.deepEqual(judge(cells), {
    measured: '900 vs 1100 deliveries/s = 0.82 × (3 masters, no replica; measured in different sessions)',
    met: true,
  });
  // The cluster's replicas are named: a ratio with them is another measurement.
  cells.set('throughput/sluice-cluster', [run('sluice-cluster', 800, 's1', 3)]);
  assert.deepEqual(judge(cells), {
    measured: '800 vs 1100 deliveries/s = 0.73 × (3 masters, 3 replicas)',
    met: false,
  });
  assert.equal(judge(new Map()).met, null);
});
