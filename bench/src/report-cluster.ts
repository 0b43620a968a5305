/**
 * The distributed shape on a Redis Cluster (`sluice-cluster`: 3 masters with a replica each,
 * all on this machine, 12 schedule shards) against the same shape on one Redis
 * (`sluice-distributed`): the hops across nodes must not eat the gain that more machines
 * make possible. A row of the distributed shape's targets (report.ts).
 */

import { type Cells, cellMedian } from './report-rows.ts';
import type { IssueTarget } from './report-targets.ts';

const FACTOR = 0.8;

const fixed = (x: number | null, digits: number): string =>
  x === null ? '–' : String(Math.round(x * 10 ** digits) / 10 ** digits);

export const CLUSTER_TARGETS: IssueTarget[] = [
  {
    target: `cluster: throughput ≥ ${FACTOR} × single Redis`,
    judge: (c: Cells) => {
      const cluster = cellMedian(c, 'throughput', 'sluice-cluster', (r) => r.deliveriesPerS);
      const single = cellMedian(c, 'throughput', 'sluice-distributed', (r) => r.deliveriesPerS);
      if (cluster === null) return { measured: 'not run (--targets sluice-cluster)', met: null };
      const ratio = single ? cluster / single : null;
      // A ratio means most when both were measured in one session (the same machine load).
      const sessions = new Set(
        ['sluice-cluster', 'sluice-distributed'].flatMap((t) =>
          (c.get(`throughput/${t}`) ?? []).map((r) => r.session),
        ),
      );
      return {
        measured: `${fixed(cluster, 0)} vs ${fixed(single, 0)} deliveries/s = ${fixed(ratio, 2)} ×${sessions.size > 1 ? ' (measured in different sessions)' : ''}`,
        met: ratio === null ? null : ratio >= FACTOR,
      };
    },
  },
];
