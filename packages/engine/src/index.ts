export { Deliverer, describeError, USER_AGENT } from './deliver.ts';
export { DestinationCache, signingSecrets } from './destinations.ts';
export { Engine, type EngineOptions, type RuntimeStats } from './engine.ts';
export { MemorySchedule } from './memory-schedule.ts';
export { EngineMetrics } from './metrics.ts';
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
  Attempt,
  ClaimedDelivery,
  CompletedAttempt,
  Delivery,
  Destination,
  DestinationCounts,
  DestinationPatch,
  DestinationSecret,
  DestinationState,
  DestinationWork,
  NewDestination,
  NewEvent,
  Store,
  Tenant,
} from './store.ts';
