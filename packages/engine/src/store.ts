/**
 * The system of record, as the engine and the API use it. The single box implements it on
 * SQLite (`@sluice/store-sqlite`); distributed mode on Postgres. Both pass one conformance
 * suite. Times are milliseconds since the epoch.
 *
 * Glossary:
 * - due: a `pending` delivery whose `nextAttemptAt` has come;
 * - claim: move due deliveries to `queued` for one tick, oldest first;
 * - complete: record an attempt and move its delivery on (DESIGN flow 3);
 * - requeue: return `queued`/`delivering` deliveries left by a crash to `pending`.
 */

import type { DeliveryStatus, RateLimit, RetryPolicy } from '@sluice/core';

export interface Tenant {
  id: string;
  name: string;
  createdAt: number;
}

export type DestinationState = 'active' | 'paused' | 'disabled';

export interface DestinationSecret {
  secret: string;
  /** When a rotated-out secret stops signing; null for the current one. */
  expiresAt: number | null;
}

export interface Destination {
  id: string;
  tenantId: string;
  name: string | null;
  url: string;
  rateLimit: RateLimit;
  maxConcurrency: number | null;
  eventTypes: string[];
  retry: RetryPolicy;
  timeoutMs: number;
  secrets: DestinationSecret[];
  state: DestinationState;
  disabledReason: string | null;
  createdAt: number;
  updatedAt: number;
}

export type NewDestination = Omit<Destination, 'state' | 'disabledReason' | 'createdAt' | 'updatedAt'>;

export type DestinationPatch = Partial<
  Pick<
    Destination,
    | 'name'
    | 'url'
    | 'rateLimit'
    | 'maxConcurrency'
    | 'eventTypes'
    | 'retry'
    | 'timeoutMs'
    | 'secrets'
    | 'state'
    | 'disabledReason'
  >
>;

export interface Delivery {
  id: string;
  eventId: string;
  destinationId: string;
  tenantId: string;
  status: DeliveryStatus;
  attempts: number;
  nextAttemptAt: number | null;
  lastError: string | null;
  createdAt: number;
  updatedAt: number;
}

export interface Attempt {
  id: string;
  deliveryId: string;
  destinationId: string;
  /** 1-based number of this attempt within its delivery. */
  attempt: number;
  startedAt: number;
  finishedAt: number;
  statusCode: number | null;
  errorCode: string | null;
  errorMessage: string | null;
  responseExcerpt: string | null;
}

export interface NewEvent {
  type: string;
  /** The payload serialized once: the exact bytes every destination receives. */
  payload: string;
  idempotencyKey: string | null;
  destinationIds: string[];
}

export interface AcceptedEvent {
  id: string;
  deliveries: { id: string; destinationId: string }[];
}

export interface AcceptResult {
  event: AcceptedEvent;
  /** True when an earlier event with the same idempotency key answered instead. */
  replayed: boolean;
}

/** A delivery handed to the delivery queue, with what its request needs. */
export interface ClaimedDelivery {
  id: string;
  eventId: string;
  destinationId: string;
  eventType: string;
  payload: string;
  /** Attempts made before this one. */
  attempts: number;
  eventCreatedAt: number;
}

export interface CompletedAttempt {
  attempt: Attempt;
  status: Extract<DeliveryStatus, 'delivered' | 'pending' | 'dead'>;
  nextAttemptAt: number | null;
  disableDestination: boolean;
}

export interface DestinationWork {
  /** Earliest `nextAttemptAt` of a pending delivery, or null when none is pending. */
  nextPendingAt: number | null;
  /** Deliveries `queued` or `delivering`. */
  inQueue: number;
}

export interface DestinationCounts {
  pending: number;
  inQueue: number;
  oldestPendingAt: number | null;
  delivered: number;
  dead: number;
}

export interface Store {
  createTenant(tenant: Tenant, apiKeyHash: string): Promise<void>;
  getTenant(id: string): Promise<Tenant | undefined>;
  tenantByKeyHash(hash: string): Promise<Tenant | undefined>;

  createDestination(destination: NewDestination, now: number): Promise<Destination>;
  /** Deleted destinations are not found. */
  getDestination(id: string): Promise<Destination | undefined>;
  updateDestination(id: string, patch: DestinationPatch, now: number): Promise<Destination | undefined>;
  /** Deletes the destination and cancels its undelivered deliveries. */
  deleteDestination(id: string, now: number): Promise<boolean>;
  listDestinations(tenantId: string): Promise<Destination[]>;

  /** One transaction for all the events: all are accepted, or none. */
  acceptEvents(tenantId: string, events: NewEvent[], now: number): Promise<AcceptResult[]>;

  getDelivery(id: string): Promise<{ delivery: Delivery; attempts: Attempt[] } | undefined>;

  claimDue(destinationId: string, max: number, now: number): Promise<ClaimedDelivery[]>;
  completeAttempts(completed: CompletedAttempt[], now: number): Promise<void>;
  destinationWork(destinationId: string): Promise<DestinationWork>;
  /** Active destinations with pending deliveries, and when the earliest is due. */
  pendingDestinations(): Promise<{ destinationId: string; nextPendingAt: number }[]>;
  /**
   * Returns `queued`/`delivering` deliveries claimed before `claimedBefore` to `pending`
   * (a crash left them), except `keep`. Returns how many per destination.
   */
  requeue(claimedBefore: number, keep: ReadonlySet<string>, now: number): Promise<Map<string, number>>;
  /** Attempts started since `since`, oldest first: the send windows after a restart. */
  recentAttempts(since: number): Promise<{ destinationId: string; startedAt: number; finishedAt: number }[]>;

  countsFor(destinationId: string, since: number, now: number): Promise<DestinationCounts>;
  /** Start times of attempts in [from, to), sorted. */
  attemptTimes(destinationId: string, from: number, to: number): Promise<number[]>;

  ping(): Promise<void>;
  close(): Promise<void>;
}
