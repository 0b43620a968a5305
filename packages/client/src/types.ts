/**
 * The API's shapes, derived from the server's zod contract (`@sluice/api`'s `contract`).
 * Type-only imports: they are erased when the client runs, so the client has no runtime
 * dependency on zod or on the API package, and cannot drift from what the server validates.
 * Requests use the schemas' input types (what you may send), responses their output types
 * (what the server answers).
 */

import type { contract } from '@sluice/api';
import type { DeliveryStatus } from '@sluice/core';
import type { z } from 'zod';

export type { DeliveryStatus };

type In<T extends z.ZodType> = z.input<T>;
type Out<T extends z.ZodType> = z.output<T>;

// ---- common

/** One page of a list: `nextCursor` is null on the last page. */
export interface Page<T> {
  data: T[];
  nextCursor: string | null;
}

/** `?limit=` (1–500, default 50) and `?cursor=` (a previous page's `nextCursor`). */
export interface ListParams {
  limit?: number;
  cursor?: string;
}

export type ErrorBody = Out<typeof contract.ErrorBody>;
export type RateLimit = Out<typeof contract.RateLimit>;
export type Period = Out<typeof contract.Period>;
export type RetryPolicy = Out<typeof contract.RetryPolicy>;

// ---- tenants

export type CreateTenantInput = In<typeof contract.CreateTenant>;
export type Tenant = Out<typeof contract.Tenant>;
/** A tenant as created: its API key is in this answer only. */
export type TenantWithKey = Out<typeof contract.TenantWithKey>;

// ---- destinations

export type CreateDestinationInput = In<typeof contract.CreateDestination>;
export type UpdateDestinationInput = In<typeof contract.PatchDestination>;
export type Destination = Out<typeof contract.Destination>;
export type DestinationState = Out<typeof contract.DestinationState>;
/** A destination as created: with its current signing secret. */
export type DestinationWithSecret = Out<typeof contract.DestinationWithSecret>;
export type RotatedSecret = Out<typeof contract.RotatedSecret>;
/** The replay body; `status` defaults to `dead`, the only status that can be replayed. */
export type ReplayInput = Omit<In<typeof contract.Replay>, 'status'> & {
  status?: In<typeof contract.Replay>['status'];
};
export type ReplayResult = Out<typeof contract.Count>;
export type DestinationStats = Out<typeof contract.Stats>;
/** A destination with its backlog and the span's outcomes (`GET /v1/destinations/stats`). */
export type DestinationOverview = Out<typeof contract.DestinationOverview>;
export interface OverviewParams extends ListParams {
  /** The span `delivered` and `dead` count over, in seconds (1–86400, default 3600). */
  seconds?: number;
}
export interface StatsParams {
  /** The span, in seconds (1–86400, default 300). */
  seconds?: number;
}
/** Endpoint health, the circuit breaker of a destination (on every `Destination` too). */
export type Health = Out<typeof contract.Health>;
export type HealthState = Out<typeof contract.HealthState>;
export type HealthTransition = Out<typeof contract.HealthTransition>;
/** `GET /v1/destinations/:id/health`: the health and its latest transitions, newest first. */
export type HealthWithTransitions = Out<typeof contract.HealthWithTransitions>;
export interface HealthParams {
  /** How many transitions, newest first (1–500, default 50). */
  limit?: number;
}

// ---- events

export type NewEvent = In<typeof contract.NewEvent>;
export type AcceptedEvent = Out<typeof contract.AcceptedEvent>;
export type AcceptedEventBatch = Out<typeof contract.AcceptedEventBatch>;
/** An event with its deliveries (each with the literal status type, as `Delivery`). */
export type Event = Omit<Out<typeof contract.Event>, 'deliveries'> & { deliveries: Delivery[] };

// ---- deliveries

/** The contract's status enum is built from `@sluice/core`'s list; its literal type lives there. */
export type Delivery = Omit<Out<typeof contract.Delivery>, 'status'> & { status: DeliveryStatus };
export type Attempt = Out<typeof contract.Attempt>;
export type DeliveryWithAttempts = Delivery & { attempts: Attempt[] };
export interface DeliveryListParams extends ListParams {
  destinationId?: string;
  eventId?: string;
  status?: DeliveryStatus;
  /** Only deliveries last changed at or after this ISO time (dead ones: died since). */
  since?: string;
}

// ---- backlog alerts

/** A backlog alert firing now: `pending_count` (deliveries) or `pending_age` (seconds). */
export type Alert = Out<typeof contract.Alert>;
export type AlertKind = Out<typeof contract.AlertKind>;
