/**
 * The typed client's hand-written types (`@sluice/client`, packages/client/src/types.ts, as
 * its built declarations ship them) are exactly this contract's: each pair below must be the
 * same type, or this file does not type-check (`npm run typecheck`). Requests are compared
 * with the schemas' input types, answers with their output types. The client cannot import
 * the contract (it ships alone, with no dependency), so the check lives on this side.
 */

import assert from 'node:assert/strict';
import { it } from 'node:test';
import type * as T from '@sluice/client';
import type { DeliveryStatus as CoreDeliveryStatus } from '@sluice/core';
import type { z } from 'zod';
import type * as contract from './contract.ts';
import type * as catalog from './contract-event-types.ts';
import type * as lifecycle from './contract-lifecycle.ts';
import type * as portal from './contract-portal.ts';

type In<S extends z.ZodType> = z.input<S>;
type Out<S extends z.ZodType> = z.output<S>;

/** Both types flattened (intersections and `extends` alike), recursively. */
type Flat<X> = X extends (...args: never[]) => unknown
  ? X
  : X extends readonly unknown[]
    ? { [K in keyof X]: Flat<X[K]> }
    : X extends object
      ? { [K in keyof X]: Flat<X[K]> }
      : X;
/** `true` only when A and B are the same type (optional and readonly modifiers included). */
type Exact<A, B> = (<V>() => V extends A ? 1 : 2) extends <V>() => V extends B ? 1 : 2 ? true : false;
/** Each assignable to the other: for the JSON payload, a recursive type `Flat` cannot unfold. */
type Mutual<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
/** `Exact` on the flattened types; the JSON payloads are compared apart, with `Mutual`. */
type Same<A, B> = Exact<Flat<NoPayload<A>>, Flat<NoPayload<B>>>;
type NoPayload<X> = X extends object ? Omit<X, 'payload'> : X;

it("the client's types are the contract's", () => {
  const checks = {
    ErrorBody: true satisfies Same<T.ErrorBody, Out<typeof contract.ErrorBody>>,
    RateLimit: true satisfies Same<T.RateLimit, Out<typeof contract.RateLimit>>,
    RateLimitIn: true satisfies Same<T.RateLimit, In<typeof contract.RateLimit>>,
    Period: true satisfies Same<T.Period, Out<typeof contract.Period>>,
    Ordering: true satisfies Same<T.Ordering, Out<typeof contract.Ordering>>,
    RetryPolicy: true satisfies Same<T.RetryPolicy, Out<typeof contract.RetryPolicy>>,
    CreateTenantInput: true satisfies Same<T.CreateTenantInput, In<typeof contract.CreateTenant>>,
    Tenant: true satisfies Same<T.Tenant, Out<typeof contract.Tenant>>,
    TenantWithKey: true satisfies Same<T.TenantWithKey, Out<typeof contract.TenantWithKey>>,
    TenantQuota: true satisfies Same<T.TenantQuota, Out<typeof contract.TenantQuota>>,
    TenantKey: true satisfies Same<T.TenantKey, Out<typeof lifecycle.TenantKey>>,
    CreatedKey: true satisfies Same<T.CreatedKey, Out<typeof lifecycle.CreatedKey>>,
    LoggedEvent: true satisfies Same<T.LoggedEvent, Out<typeof lifecycle.LoggedEvent>>,
    UpdateTenantInput: true satisfies Same<T.UpdateTenantInput, In<typeof contract.PatchTenant>>,
    CreateDestinationInput: true satisfies Same<
      T.CreateDestinationInput,
      In<typeof contract.CreateDestination>
    >,
    UpdateDestinationInput: true satisfies Same<
      T.UpdateDestinationInput,
      In<typeof contract.PatchDestination>
    >,
    Destination: true satisfies Same<T.Destination, Out<typeof contract.Destination>>,
    DestinationState: true satisfies Same<T.DestinationState, Out<typeof contract.DestinationState>>,
    DestinationWithSecret: true satisfies Same<
      T.DestinationWithSecret,
      Out<typeof contract.DestinationWithSecret>
    >,
    RotatedSecret: true satisfies Same<T.RotatedSecret, Out<typeof contract.RotatedSecret>>,
    DestinationSecrets: true satisfies Same<T.DestinationSecrets, Out<typeof contract.DestinationSecrets>>,
    // `status` may be left out: the client sends `dead`, the only status that can be replayed.
    ReplayInput: true satisfies Same<
      T.ReplayInput,
      Omit<In<typeof contract.Replay>, 'status'> & { status?: In<typeof contract.Replay>['status'] }
    >,
    ReplayResult: true satisfies Same<T.ReplayResult, Out<typeof contract.Count>>,
    DestinationStats: true satisfies Same<T.DestinationStats, Out<typeof contract.Stats>>,
    Backlog: true satisfies Same<T.Backlog, Out<typeof contract.Backlog>>,
    DestinationOverview: true satisfies Same<T.DestinationOverview, Out<typeof contract.DestinationOverview>>,
    Health: true satisfies Same<T.Health, Out<typeof contract.Health>>,
    HealthState: true satisfies Same<T.HealthState, Out<typeof contract.HealthState>>,
    HealthTransition: true satisfies Same<T.HealthTransition, Out<typeof contract.HealthTransition>>,
    HealthWithTransitions: true satisfies Same<
      T.HealthWithTransitions,
      Out<typeof contract.HealthWithTransitions>
    >,
    JsonValue: true satisfies Mutual<T.JsonValue, Out<typeof contract.NewEvent>['payload']>,
    NewEventPayload: true satisfies Exact<T.NewEvent['payload'], In<typeof contract.NewEvent>['payload']>,
    EventPayload: true satisfies Mutual<T.Event['payload'], Out<typeof contract.Event>['payload']>,
    NewEvent: true satisfies Same<T.NewEvent, In<typeof contract.NewEvent>>,
    AcceptedEvent: true satisfies Same<T.AcceptedEvent, Out<typeof contract.AcceptedEvent>>,
    AcceptedEventBatch: true satisfies Same<T.AcceptedEventBatch, Out<typeof contract.AcceptedEventBatch>>,
    // The contract's status enum is built from `@sluice/core`'s list; its literal type lives there.
    DeliveryStatus: true satisfies Same<T.DeliveryStatus, CoreDeliveryStatus>,
    Delivery: true satisfies Same<
      T.Delivery,
      Omit<Out<typeof contract.Delivery>, 'status'> & { status: CoreDeliveryStatus }
    >,
    Attempt: true satisfies Same<T.Attempt, Out<typeof contract.Attempt>>,
    Event: true satisfies Same<
      T.Event,
      Omit<Out<typeof contract.Event>, 'deliveries'> & { deliveries: T.Delivery[] }
    >,
    Alert: true satisfies Same<T.Alert, Out<typeof contract.Alert>>,
    AlertKind: true satisfies Same<T.AlertKind, Out<typeof contract.AlertKind>>,
    EventType: true satisfies Same<T.EventType, Out<typeof catalog.EventType>>,
    // The example is any JSON (the client's `JsonValue`; the contract's `unknown`).
    CreateEventTypeInput: true satisfies Same<
      Omit<T.CreateEventTypeInput, 'example'>,
      Omit<In<typeof catalog.CreateEventType>, 'example'>
    >,
    UpdateEventTypeInput: true satisfies Same<
      Omit<T.UpdateEventTypeInput, 'example'>,
      Omit<In<typeof catalog.PatchEventType>, 'example'>
    >,
    Whoami: true satisfies Same<T.Whoami, Out<typeof portal.Whoami>>,
    Branding: true satisfies Same<T.Branding, Out<typeof portal.Branding>>,
    PortalAccess: true satisfies Same<T.PortalAccess, Out<typeof portal.PortalAccess>>,
    PortalLink: true satisfies Same<T.PortalLink, Out<typeof portal.PortalLink>>,
    CreatedPortalLink: true satisfies Same<T.CreatedPortalLink, Out<typeof portal.CreatedPortalLink>>,
    CreatePortalLinkInput: true satisfies Same<T.CreatePortalLinkInput, In<typeof portal.CreatePortalLink>>,
    // The body may be left out (or null); its payload is any JSON.
    TestEventInput: true satisfies Same<
      Omit<T.TestEventInput, 'payload'>,
      Omit<NonNullable<In<typeof portal.TestEvent>>, 'payload'>
    >,
  };
  assert.ok(Object.values(checks).every((check) => check));
});
