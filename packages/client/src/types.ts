/**
 * The API's shapes by name: each is an alias of a type generated from the API's OpenAPI
 * document (openapi.ts, `npm run generate:client -w @sluice/api`), so none is written out
 * by hand and none can disagree with the server. Requests are the document's input schemas
 * (what you may send: fields with a default may be left out), answers its output schemas
 * (what the server answers). Like the rest of the package, they import nothing at run time.
 *
 * Beyond the document, three choices of the client's own: an answer's event payload is typed
 * `JsonValue` (the document says any JSON), a replay's `status` may be left out (the client
 * sends `dead`), and list parameters leave out `tenantId` (the call's options carry it).
 */

import type { components, paths } from './openapi.ts';

type Schemas = components['schemas'];

/** The JSON body an operation accepts. */
type JsonBody<Op> = Op extends { requestBody?: { content: { 'application/json': infer B } } }
  ? NonNullable<B>
  : never;

/** An operation's query parameters, without `tenantId` (`TenantCallOptions` sends it). */
type QueryOf<Op> = Op extends { parameters: { query?: infer Q } } ? Omit<NonNullable<Q>, 'tenantId'> : never;

/** An answer with its event payload as `JsonValue` (the document says any JSON). */
type WithJsonPayload<T extends { payload: unknown }> = Omit<T, 'payload'> & { payload: JsonValue };

/** Any JSON value: an event's payload, as the server answers it. */
export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };

// ---- common

/** One page of a list: `nextCursor` is null on the last page. */
export interface Page<T> {
  data: T[];
  nextCursor: string | null;
}

/** `?limit=` (1–500, default 50) and `?cursor=` (a previous page's `nextCursor`). */
export type ListParams = QueryOf<paths['/v1/tenants']['get']>;

/** The body of every error answer. */
export type ErrorBody = Schemas['Error'];

export type Period = RateLimit['period'];

/** Most requests in any sliding window of one period (the burst, where one is set). */
export type RateLimit = Schemas['RateLimit'];

/**
 * `fifo`: first attempts leave one at a time in the order the events were accepted (a
 * failing one is retried later and blocks nothing); `none`: no ordering.
 */
export type Ordering = Schemas['Ordering'];

export type RetryPolicy = Schemas['RetryPolicy'];

// ---- tenants

export type CreateTenantInput = JsonBody<paths['/v1/tenants']['post']>;

/**
 * The operator's quotas of a tenant: a number is the tenant's own, null falls back to the
 * operator-wide default (none unless the operator set one). Past a quota, ingest answers
 * `429 rate_limited` with `Retry-After` (`SluiceError.retryAfterSeconds`).
 */
export type TenantQuota = Schemas['TenantQuota'];

export type Tenant = Schemas['Tenant'];

/** `tenants.update`: the fields named change, the others stay. */
export type UpdateTenantInput = Schemas['PatchTenantInput'];

/** A tenant as created: its API key is in this answer only. */
export type TenantWithKey = Schemas['TenantWithKey'];

/** One of a tenant's API keys as listed: never the key itself. */
export type TenantKey = Schemas['TenantKey'];

/** A key as created: `apiKey` is in this answer only. */
export type CreatedKey = Schemas['CreatedKey'];

// ---- destinations

export type CreateDestinationInput = JsonBody<paths['/v1/destinations']['post']>;

/** A patch: at least one field. */
export type UpdateDestinationInput = JsonBody<paths['/v1/destinations/{id}']['patch']>;

export type DestinationState = Destination['state'];

/** Endpoint health: the circuit breaker of a destination. */
export type HealthState = Health['state'];

/** Endpoint health, the circuit breaker of a destination (on every `Destination` too). */
export type Health = Schemas['Health'];

export type HealthTransition = Schemas['HealthTransition'];

/** `GET /v1/destinations/:id/health`: the health and its latest transitions, newest first. */
export type HealthWithTransitions = Schemas['HealthWithTransitions'];

export type Destination = Schemas['Destination'];

/** A destination as created: with its current signing secret. */
export type DestinationWithSecret = Schemas['DestinationWithSecret'];

export type RotatedSecret = Schemas['RotatedSecret'];

/** A destination's signing secrets: the current one and the rotated-out ones still signing. */
export type DestinationSecrets = Schemas['DestinationSecrets'];

type ReplayBody = JsonBody<paths['/v1/destinations/{id}/replay']['post']>;

/** The replay body; `status` defaults to `dead`, the only status that can be replayed. */
export type ReplayInput = Omit<ReplayBody, 'status'> & { status?: ReplayBody['status'] };

export type ReplayResult = Schemas['Count'];

export type DestinationStats = Schemas['DestinationStats'];

/** A destination's backlog now, and its outcomes over the span. */
export type Backlog = Schemas['Backlog'];

/** A destination with its backlog and the span's outcomes (`GET /v1/destinations/stats`). */
export type DestinationOverview = Schemas['DestinationOverview'];

/** A page (`limit`, `cursor`) and the span `delivered` and `dead` count over (`seconds`, 1–86400, default 3600). */
export type OverviewParams = QueryOf<paths['/v1/destinations/stats']['get']>;

/** The span, in seconds (1–86400, default 300). */
export type StatsParams = QueryOf<paths['/v1/destinations/{id}/stats']['get']>;

/** How many transitions, newest first (1–500, default 50). */
export type HealthParams = QueryOf<paths['/v1/destinations/{id}/health']['get']>;

/** `POST /v1/destinations/:id/test`: both optional (type `sluice.test`; the payload from the catalog). */
export type TestEventInput = NonNullable<Schemas['TestEventInput']>;

/** `POST /v1/destinations/:id/preview`: an event, and a filter or transform to try instead of its own. */
export type PreviewInput = Schemas['PreviewRequestInput'];

/** What the destination would send for the event (after its filter and transform, before signing), or why not. */
export type Preview = Schemas['Preview'];

// ---- events

/** An event to accept: its payload is any value `JSON.stringify` keeps (it is sent as JSON). */
export type NewEvent = Schemas['NewEventInput'];

export type AcceptedEvent = Schemas['AcceptedEvent'];

export type AcceptedEventBatch = Schemas['AcceptedEventBatch'];

/** An event with its deliveries. */
export type Event = WithJsonPayload<Schemas['Event']>;

/** An event of the event log: without its payload and its deliveries (`events.get` has both). */
export type LoggedEvent = Schemas['LoggedEvent'];

/** The event log's filters: `type` (or `prefix.*`), `destinationId`, `since`, `until`, and a page. */
export type EventListParams = QueryOf<paths['/v1/events']['get']>;

// ---- deliveries

export type DeliveryStatus = Delivery['status'];

export type Delivery = Schemas['Delivery'];

export type Attempt = Schemas['Attempt'];

export type DeliveryWithAttempts = Schemas['DeliveryWithAttempts'];

/** Deliveries by `destinationId`, `eventId`, `status` and `since` (last change), and a page. */
export type DeliveryListParams = QueryOf<paths['/v1/deliveries']['get']>;

// ---- backlog alerts

export type AlertKind = Alert['kind'];

/** A backlog alert firing now: `pending_count` (deliveries) or `pending_age` (seconds). */
export type Alert = Schemas['Alert'];

// ---- the event-type catalog

/** A JSON Schema (draft-07) as a plain object. */
export type JsonSchema = NonNullable<EventType['schema']>;

export type EventType = Schemas['EventType'];

export type CreateEventTypeInput = Schemas['CreateEventTypeInput'];

/** Fields left out stay; `null` removes the schema or the example. */
export type UpdateEventTypeInput = Schemas['PatchEventTypeInput'];

// ---- who am I, portal links

export type PortalAccess = PortalLink['access'];

/** How the portal looks: shown by the viewer's browser; Sluice never fetches the logo. */
export type Branding = Schemas['Branding'];

/** `GET /v1/whoami`: the token's role, its tenant (null for the admin token) and, for a portal token, its link. */
export type Whoami = Schemas['Whoami'];

export type CreatePortalLinkInput = Schemas['CreatePortalLinkInput'];

/** A link's token and URL are in this answer only. */
export type CreatedPortalLink = Schemas['CreatedPortalLink'];

/** A link as listed: never its token. */
export type PortalLink = Schemas['PortalLink'];
