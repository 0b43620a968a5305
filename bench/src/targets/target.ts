/**
 * What the bench needs from a system under test. Each target is one module with a
 * `createTarget(setup)`; the driver (driver.ts) runs it in a process of its own, hands it the
 * workload's events and limit changes, and stops it.
 *
 * Creation time: the driver stamps each hand-over (`createdAt`, just before `submit`), the
 * target puts that stamp in every event's payload, unchanged, and hands the events over at
 * once (Sluice: the HTTP POST; BullMQ: `addBulk`; the ceiling: its in-process queue).
 */

import type { ProcessGroup } from '../procstat.ts';
import type { PlannedEvent, Workload } from '../workload.ts';

export const TARGETS = ['sluice', 'sluice-distributed', 'sluice-cluster', 'bullmq-rlf', 'ceiling'] as const;
export type TargetName = (typeof TARGETS)[number];

export interface TargetOptions {
  /** The Sluice checkout to start (the repository root, or a snapshot of a git ref). */
  sluiceRoot: string;
  /** Start Sluice with `--cpu-prof` (the profile is written into the run's directory). */
  profile: boolean;
  redis: { host: string; port: number };
  /** The Redis above is the bench session's own (@sluice/testing): its counters are the run's alone. */
  redisPrivate?: boolean;
  /**
   * The bench session's own Redis Cluster (`startPrivateCluster` of @sluice/testing) for
   * `sluice-cluster`: a seed node's URL and every node. Absent unless a session's targets include it.
   */
  redisCluster?: { url: string; seeds: { host: string; port: number }[] };
  /** The Postgres server of the distributed target (its database name is replaced per run). */
  postgresUrl: string;
  /** Sluice's environment additions (`--sluice-env KEY=VALUE`). */
  sluiceEnv: Record<string, string>;
}

export interface TargetSetup {
  workload: Workload;
  receiverUrl: string;
  runId: string;
  runDir: string;
  options: TargetOptions;
}

export interface Target {
  /** The processes that make up the system under test, by name (for /proc sampling). */
  pids(): Record<string, number>;
  /** Processes it did not start and whose pids come and go (Postgres backends), by name. */
  processGroups?(): Record<string, ProcessGroup>;
  /** Creates whatever the workload needs (tenant, destinations, limiters). */
  setup(): Promise<Record<string, unknown>>;
  /** Hands events over; resolves when the target has accepted them (the count accepted). */
  submit(events: readonly PlannedEvent[], createdAt: number): Promise<number>;
  /** Sets a destination's limit from now on; resolves when in effect as far as the API says. */
  setLimit(dest: string, limit: number): Promise<void>;
  /** The target's own view (Sluice: its Prometheus metrics), taken at the runner's marks. */
  snapshot(): Promise<Record<string, unknown> | null>;
  /**
   * What it holds, in bytes, by store (cost-curve: before the first hand-over and after the
   * last delivery): `redisUsedMemory`, `postgresDatabase` and `postgres:<table>`, `sqliteFiles`.
   */
  storage?(): Promise<Record<string, number>>;
  /** Stops, cleans up (temp dirs, Redis keys), answers its own statistics. */
  stop(): Promise<Record<string, unknown>>;
}

export type CreateTarget = (setup: TargetSetup) => Promise<Target>;
