export { type AlertNotice, alertFromRow, backlogSampleFromRow } from './alerts.ts';
export type {
  AcceptedEvent,
  AcceptOptions,
  AcceptResult,
  Attempt,
  Delivery,
  NewEvent,
  RetentionResult,
  RetryResult,
  StoredEvent,
} from './delivery.ts';
export {
  type Destination,
  type DestinationPatch,
  type DestinationSecret,
  type DestinationState,
  type DestinationTransform,
  type NewDestination,
  type NewTenant,
  newDestinationRecord,
  patchedDestination,
  type Tenant,
  type TenantPatch,
} from './destination.ts';
export {
  insertDestinationSql,
  insertValues,
  type Mark,
  updateDestinationSql,
  updateValues,
  upsertDestinationSql,
} from './destination-sql.ts';
export { DiskFull, PROBE_BYTES } from './disk-full.ts';
export {
  type EventType,
  type EventTypeFields,
  type EventTypePageRequest,
  eventTypeFromRow,
  eventTypePage,
  eventTypeSql,
  eventTypeValues,
} from './event-types.ts';
export type { HealthChange, HealthTransition, ProbeClaim } from './health.ts';
export { healthFromRow, transitionFromRow, transitionReason } from './health-rows.ts';
export {
  type CompletionChanges,
  completionNotices,
  type MovedDestination,
  type OperationalNotice,
  type OperationalType,
  operationalEvent,
  recoveredNotice,
  type Subscriber,
  subscribersSql,
} from './operational.ts';
export {
  type Condition,
  type DeliveryFilter,
  deliveryConditions,
  type Page,
  type PageRequest,
  pageOf,
  pageStatement,
} from './page.ts';
export { type PerTurn, perTurn } from './per-turn.ts';
export {
  EXPIRED_LINKS_KEPT_MS,
  type NewPortalLink,
  type PortalAccess,
  type PortalBranding,
  type PortalLink,
  type PortalLinkMatch,
  portalLinkFromRow,
  portalLinkMatchFromRow,
  portalLinkSql,
  portalLinksStatement,
  portalLinkValues,
} from './portal-links.ts';
export {
  insertRateLimitChangeSql,
  type RateLimitChange,
  rateLimitChangeFromRow,
  rateLimitChangesSql,
  rateLimitChangeValues,
  sameRateLimit,
} from './rate-limit-changes.ts';
export {
  attemptFromRow,
  claimedFromRow,
  deliveryFromRow,
  destinationDecoder,
  destinationFromRow,
  eventFromRow,
  type Row,
  TENANT_COLUMNS,
  tenantFromRow,
} from './rows.ts';
export type { Store } from './store.ts';
export {
  type EventFilter,
  eventsStatement,
  firstKeyId,
  insertKeySql,
  type KeyDeletion,
  type KeyMatch,
  keyFromRow,
  keyMatchFromRow,
  keyMatchSql,
  type LoggedEvent,
  listKeysSql,
  loggedEventFromRow,
  type NewTenantKey,
  type TenantKey,
  touchKeySql,
} from './tenant-keys.ts';
export { insertTenantSql, pendingEventsSql, updateTenantStatement } from './tenant-sql.ts';
export { isUnavailable, notReadyReason, StoreUnavailableError } from './unavailable.ts';
export {
  type Claim,
  type ClaimedDelivery,
  type CompletedAttempt,
  type DestinationCounts,
  type DestinationWork,
  emptyCounts,
  type StaleClaim,
} from './work.ts';
