export {
  ADAPTIVE,
  type AdaptiveFeedback,
  type AdaptiveParams,
  type AdaptiveState,
  adapt,
  type EffectiveLimit,
  effectiveLimit,
  freshAdaptive,
  scaledRateLimit,
} from './adaptive.ts';
export { bucketRefusals, maxInAnyWindow, perSecond } from './audit.ts';
export {
  ALERT_KINDS,
  type AlertChange,
  type AlertKind,
  type AlertThresholds,
  type BacklogSample,
  countCap,
  evaluateAlerts,
  type FiringAlert,
} from './backlog-alerts.ts';
export {
  type BucketState,
  bucketFinish,
  bucketRoomAt,
  bucketStart,
  bucketTokens,
  emissionMs,
  emptyBucket,
  tatFromArrivals,
} from './bucket.ts';
export {
  DELIVERY_STATUSES,
  type DeliveryStatus,
  type DeliveryTransition,
  sourcesOf,
  sqlSourcesOf,
  transition,
} from './delivery-state.ts';
export {
  BUILT_IN_EVENT_TYPES,
  builtInEventType,
  catalogNameProblem,
  type EventTypeDefinition,
  isReservedType,
  MAX_EVENT_TYPE_LENGTH,
  RESERVED_PREFIX,
} from './event-catalog.ts';
export {
  type EventFilter,
  FILTER_OPERATORS,
  filterProblem,
  MAX_FILTER_BYTES,
  matchesFilter,
} from './event-filter.ts';
export { EVENT_TYPE, EVENT_TYPE_PATTERN, matchesEventType } from './event-types.ts';
export {
  FAIR_FLOOR,
  FAIR_HEADROOM,
  type FairBound,
  fairRecheckAt,
  inFlightBound,
  LATENCY_ALPHA,
  nextLatency,
} from './fair.ts';
export {
  type ClassifiedResult,
  classifyAttempt,
  DEFAULT_HEALTH_POLICY,
  ERROR_CLASSES,
  type ErrorClass,
  failureRate,
  HEALTH_STATES,
  HEALTHY,
  type Health,
  type HealthBatch,
  type HealthPolicy,
  type HealthState,
  healthMoves,
  isBreakerClass,
  isHeld,
  nextHealth,
  probeDelayMs,
  SUSPEND_REASONS,
  type SuspendReason,
  summarize,
} from './health.ts';
export { hasPrefix, type IdPrefix, newId } from './ids.ts';
export {
  type ClaimOrder,
  claimOrder,
  concurrencyCap,
  DEFAULT_ORDERING,
  ORDERINGS,
  type Ordering,
} from './ordering.ts';
export { type AttemptOutcome, type AttemptResult, decideOutcome, isSuccess } from './outcome.ts';
export {
  effectiveQuota,
  fitsPending,
  NO_QUOTA,
  PENDING_RETRY_AFTER_S,
  type QuotaName,
  type RateDecision,
  retryAfterSeconds,
  type TenantQuota,
  takeRate,
} from './quota.ts';
export { mulberry32 } from './random.ts';
export {
  lowersCap,
  PERIOD_MS,
  PERIODS,
  type Period,
  type RateLimit,
  type RatePlan,
  ratePlan,
  windowCap,
} from './rate-plan.ts';
export {
  type DestinationAuth,
  type DestinationHeaders,
  headerBytes,
  headerNameProblem,
  isHeaderValue,
  MAX_HEADER_BYTES,
  MAX_HEADERS,
  mapAuthSecret,
  type OAuth2ClientCredentials,
  type PresentedAuth,
  presentAuth,
  receiverHeaders,
  resealedAuth,
} from './receiver-auth.ts';
export {
  CERTIFICATE_WARNING_MS,
  type CertificateView,
  clientCertificateEnd,
  type DestinationTls,
  MAX_PEM_BYTES,
  mapTlsSecret,
  type PresentedTls,
  presentTls,
  resealedTls,
  type TlsProblem,
  tlsProblems,
} from './receiver-tls.ts';
export {
  BACKOFF_MULTIPLIER,
  backoffCeilingMs,
  DEFAULT_RETRY_POLICY,
  MAX_RETRY_AFTER_MS,
  parseRetryAfter,
  type RetryPolicy,
  retryDelayMs,
} from './retry.ts';
export {
  generateKeyText,
  isSealed,
  isSealedWithCurrent,
  KEYRING_FORMAT,
  type Keyring,
  newKeyring,
  openSecret,
  parseKeyring,
  SecretBoxError,
  sealSecret,
} from './secret-box.ts';
export { type SendHandle, SendWindow, type SendWindowOptions } from './send-window.ts';
export { generateSecret, isValidSecret, type SignInput, signatureHeader, signOne } from './signature.ts';
export { heldBySlowRequests, mayTakeSlot, type SlotAsk, tenantShare } from './tenant-share.ts';
export {
  decideTick,
  MIN_TICK_GAP_MS,
  nextTickAt,
  publishAhead,
  roomBatch,
  type TickDecision,
  type TickInput,
  type TickLimit,
} from './tick.ts';
