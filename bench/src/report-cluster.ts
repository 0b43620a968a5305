/**
 * The distributed shape on a Redis Cluster (`sluice-cluster`: 3 masters, all on this machine,
 * 12 schedule shards; `--cluster-replicas` adds replicas, none by default) against the same
 * shape on one Redis (`sluice-distributed`, no replica either): the hops across nodes must
 * not eat the gain that more machines make possible. A row of the distributed shape's
 * targets (report.ts), which names the replicas its runs had.
 */

import { type Cells, cellMedian, cellRuns, type RunRecord } from './report-rows.ts';
import type { IssueTarget } from './report-targets.ts';

const FACTOR = 0.8;

const fixed = (x: number | null, digits: number): string =>
  x === null ? '–' : String(Math.round(x * 10 ** digits) / 10 ** digits);

/** The cluster's shape as a run recorded it: its masters and its replicas, from their processes. */
function topology(runs: readonly RunRecord[]): string {
  const shapes = new Set(
    runs.map((r) => {
      const names = Object.keys(r.processes ?? {});
      const masters = names.filter((n) => n.startsWith('redis-master-')).length;
      const replicas = names.filter((n) => n.startsWith('redis-replica-')).length;
      return replicas === 0 ? `${masters} masters, no replica` : `${masters} masters, ${replicas} replicas`;
    }),
  );
  return [...shapes].join('; ');
}

export const CLUSTER_TARGETS: IssueTarget[] = [
  {
    target: `cluster: throughput ≥ ${FACTOR} × single Redis`,
    runs: cellRuns('throughput', ['sluice-cluster', 'sluice-distributed']),
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
        measured: `${fixed(cluster, 0)} vs ${fixed(single, 0)} deliveries/s = ${fixed(ratio, 2)} × (${topology(c.get('throughput/sluice-cluster') ?? [])}${sessions.size > 1 ? '; measured in different sessions' : ''})`,
        met: ratio === null ? null : ratio >= FACTOR,
      };
    },
  },
];
