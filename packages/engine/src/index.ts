/**
 * What both shapes run (docs/design.md, "The two shapes"), in layers that import only
 * downwards (biome.json's overrides refuse an import that runs back up):
 *
 *   single/               the single box's Engine, and its in-memory adapters beneath the
 *                         policies: wires every layer below
 *   delivery/, sweep/     one delivery from its start to its completion, and what follows a
 *                         completion or a change of a destination; the sweeper and the rebuild
 *                         of the schedule and the pace from the store (both shapes' policies,
 *                         neither importing the other)
 *   tick/                 the tick, the schedule it runs on, the probe of an open circuit,
 *                         the wake (both shapes' policy)
 *   pace/                 the pace ports, the single box's pace in memory, the limit planned with
 *   destination-cache.ts  the live destination cache (the tick, the delivery, the change feed)
 *   transform/            destinations' transforms in the QuickJS sandbox, on threads of their own
 *   ops/                  metrics, the ops server, retention, backlog alerts: imports no other layer
 *
 * `dispatcher.ts` is the API's port onto all of it. This file is the package's surface.
 */

export { followDestinationChange } from './delivery/change-policy.ts';
export { type CompletionFollowUps, completionFollowUps } from './delivery/completion-policy.ts';
export { type Completion, CompletionWriter } from './delivery/completion-writer.ts';
export { Deliverer, describeError, USER_AGENT } from './delivery/deliver.ts';
export { FairSlots, type Release } from './delivery/fair-slots.ts';
export { TENANT_QUICK_MS } from './delivery/local-queue.ts';
export {
  AUTH_FAILED,
  type CachedToken,
  MemoryTokenCache,
  OAuthTokens,
  type TokenCache,
} from './delivery/oauth-tokens.ts';
export { DeliveryRunner } from './delivery/runner.ts';
export {
  checkUrlHost,
  DestinationNotAllowedError,
  guardedLookup,
  isForbiddenAddress,
  type LookupFunction,
  NOT_ALLOWED,
} from './delivery/ssrf.ts';
export { DestinationCache } from './destination-cache.ts';
export type { Dispatcher } from './dispatcher.ts';
export { Alerter, registerAlertGauge } from './ops/alerter.ts';
export { certificateNotice } from './ops/certificate-watch.ts';
export { registerHealthGauge } from './ops/health-metrics.ts';
export { EngineMetrics, type Sample } from './ops/metrics.ts';
export { type OpsServer, startOpsServer } from './ops/ops-server.ts';
export { MIN_RETENTION_MS, Retention } from './ops/retention.ts';
export { exposition, scrapeAllowed } from './ops/scrape.ts';
export { drainOnSignal } from './ops/shutdown.ts';
export { ALERTS_DESTINATION_ID, ensureAlertsDestination, SYSTEM_TENANT } from './ops/system.ts';
export { MemoryPacing, Pacer } from './pace/memory-pacing.ts';
export {
  type AttemptPace,
  type AttemptPacing,
  LeaseLostError,
  type PaceCounts,
  type PublishedPlan,
  type PublishOptions,
  type TickPacing,
} from './pace/pacing.ts';
export { type RuntimeStats, runtimeStats } from './pace/runtime-stats.ts';
export { Engine, type EngineOptions } from './single/engine.ts';
export { type Recovered, type RecoveryPorts, recoverFromStore } from './sweep/recovery.ts';
export { Sweeper, type SweepPorts, sweepOnce } from './sweep/sweeper.ts';
export { MemorySchedule } from './tick/memory-schedule.ts';
export type { Schedule } from './tick/schedule.ts';
export { createTick, type Publisher, TENANT_HELD_RECHECK_MS } from './tick/tick.ts';
export { type WakePorts, wakeForWork } from './tick/wake.ts';
export { TRANSFORM_CANCELLED, TRANSFORM_FAILED } from './transform/transform-output.ts';
export { Transforms, transformLogs } from './transform/transforms.ts';
