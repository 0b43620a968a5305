export { Alerter, registerAlertGauge } from './alerter.ts';
export { untilOldLimitArrived } from './arrivals.ts';
export {
  type CompletionFollowUps,
  type CompletionPorts,
  completionFollowUps,
  pendingAgainAt,
  probeWakeAt,
} from './completion-policy.ts';
export { type Completion, CompletionWriter } from './completion-writer.ts';
export { Deliverer, describeError, USER_AGENT } from './deliver.ts';
export { defaultDeliveryThreads } from './delivery-threads.ts';
export { DestinationCache, signingSecrets } from './destinations.ts';
export { Engine, type EngineOptions } from './engine.ts';
export { registerHealthGauge } from './health-metrics.ts';
export { healthFromRow, isTransition, transitionFromRow, transitionReason } from './health-rows.ts';
export { createTick, type Publisher, paceLimit } from './limiter.ts';
export { MemorySchedule } from './memory-schedule.ts';
export { EngineMetrics, type Sample } from './metrics.ts';
export { type OpsServer, startOpsServer } from './ops-server.ts';
export {
  type AttemptPace,
  type AttemptPacing,
  LeaseLostError,
  MemoryPacing,
  type PaceCounts,
  type PublishedPlan,
  type PublishOptions,
  type TickPacing,
} from './pacing.ts';
export { type PerTurn, perTurn } from './per-turn.ts';
export { MIN_RETENTION_MS, Retention } from './retention.ts';
export {
  attemptFromRow,
  claimedFromRow,
  DESTINATION_COLUMNS,
  type DestinationColumn,
  deliveryFromRow,
  destinationDecoder,
  destinationFromRow,
  destinationParams,
  type Row,
} from './rows.ts';
export { DeliveryRunner } from './runner.ts';
export { type RuntimeStats, runtimeStats } from './runtime-stats.ts';
export { drainOnSignal } from './shutdown.ts';
export {
  checkUrlHost,
  DestinationNotAllowedError,
  guardedLookup,
  isForbiddenAddress,
  type LookupFunction,
  NOT_ALLOWED,
} from './ssrf.ts';
export type {
  AcceptedEvent,
  AcceptResult,
  AlertNotice,
  Attempt,
  Claim,
  ClaimedDelivery,
  CompletedAttempt,
  Delivery,
  DeliveryFilter,
  Destination,
  DestinationCounts,
  DestinationPatch,
  DestinationSecret,
  DestinationState,
  DestinationWork,
  HealthChange,
  HealthTransition,
  NewDestination,
  NewEvent,
  Page,
  PageRequest,
  ProbeClaim,
  RetentionResult,
  RetryResult,
  StaleClaim,
  Store,
  StoredEvent,
  Tenant,
} from './store.ts';
export { reportRepairs } from './sweeper.ts';
export { ALERTS_DESTINATION_ID, ensureAlertsDestination } from './system.ts';
