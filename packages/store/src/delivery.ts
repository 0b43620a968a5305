/** Events, their deliveries and the attempts made for them, as the stores keep them. */

import type { DeliveryStatus } from '@sluice/core';

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

/** How an accept may run; the answer is the same either way: all of its events, or none. */
export interface AcceptOptions {
  /**
   * Let others' writes run between its parts: a store whose one writer a long transaction
   * would hold (SQLite: a 1,000-event batch holds the single box's writer and main thread for
   * ~20 ms) accepts it in slices, at more work in all; Postgres, whose writers do not wait on
   * each other's rows, ignores it. The bulk lane asks for it while other requests come in.
   */
  slices?: boolean;
}

export interface StoredEvent {
  id: string;
  tenantId: string;
  type: string;
  payload: string;
  idempotencyKey: string | null;
  createdAt: number;
}

export interface Delivery {
  id: string;
  eventId: string;
  destinationId: string;
  tenantId: string;
  /**
   * 1, 2, 3… per destination in the order its deliveries are first claimed (`webhook-sequence`),
   * kept after that; null until the first claim (docs/adr/0006).
   */
  sequence: number | null;
  status: DeliveryStatus;
  attempts: number;
  /** Attempts made before the last replay or manual retry (the policy counts from here). */
  attemptBase: number;
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

export type RetryResult = { ok: true; delivery: Delivery } | { ok: false; reason: 'not_found' | 'conflict' };

export interface RetentionResult {
  deliveries: number;
  attempts: number;
  events: number;
  /**
   * Endpoint-health transitions (the history `GET …/health` shows) and rate-limit changes
   * (the limit line `GET …/stats` draws) older than the cutoff.
   */
  transitions: number;
}
