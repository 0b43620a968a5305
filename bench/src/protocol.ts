/**
 * Messages between the runner (run.ts) and a driver process (driver.ts), over the IPC
 * channel of `fork`. One run:
 *
 *   runner ─setup─▶ driver ─ready(pids, groups)─▶ runner   (target started, destinations created)
 *   runner ─start─▶ driver ─changed…, ingested─▶ runner
 *   runner ─snapshot─▶ driver ─snapshot─▶ runner   (at the runner's marks)
 *   runner ─storage─▶ driver ─storage─▶ runner     (cost-curve: bytes held, by store)
 *   runner ─stop─▶ driver ─stopped(stats)─▶ runner, then the driver exits
 *
 * A driver that fails sends `failed` and exits non-zero.
 */

import type { ProcessGroup } from './procstat.ts';
import type { TargetName, TargetOptions } from './targets/target.ts';
import type { Workload } from './workload.ts';

export interface IngestStats {
  /** Creation time of the first event (the first hand-over). */
  t0: number;
  /** When the last event was handed over. */
  doneAt: number;
  submitted: number;
  accepted: number;
  /** Most time between an event's due time and its hand-over (steady ingest). */
  maxLagMs: number;
  /** Time spent inside `submit` (the target taking events). */
  submitMs: number;
  /** Burst: each chunk's hand-over, from t0 to when the target took it (ms). */
  chunksDoneMs?: number[];
}

export interface AppliedChange {
  dest: string;
  from: number;
  limit: number;
  /** When the change was sent, and when the target acknowledged it. */
  sentAt: number;
  appliedAt: number;
}

export type ToDriver =
  | {
      kind: 'setup';
      target: TargetName;
      workload: Workload;
      receiverUrl: string;
      runId: string;
      runDir: string;
      options: TargetOptions;
    }
  | { kind: 'start' }
  | { kind: 'snapshot'; mark: string }
  | { kind: 'storage' }
  | { kind: 'stop' };

export type FromDriver =
  | {
      kind: 'ready';
      pids: Record<string, number>;
      groups: Record<string, ProcessGroup>;
      setup: Record<string, unknown>;
    }
  | { kind: 'changed'; change: AppliedChange }
  | { kind: 'ingested'; stats: IngestStats }
  | { kind: 'snapshot'; mark: string; data: Record<string, unknown> | null }
  | { kind: 'storage'; data: Record<string, number> | null }
  | { kind: 'stopped'; stats: Record<string, unknown> }
  | { kind: 'failed'; error: string };
