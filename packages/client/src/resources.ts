/**
 * The API's routes, one method each, grouped as the API groups them. Every list has three
 * forms: `list` (one page), `pages` (an async iterator over the pages) and `listAll` (an
 * async iterator over every item of every page). Lists are newest first and their cursors
 * are stable while rows are added: a walk sees every row that existed when it started
 * exactly once.
 */

import { type CallOptions, pick, type Query, type RequestSpec, seg } from './http.ts';
import type {
  AcceptedEvent,
  AcceptedEventBatch,
  Alert,
  CreateDestinationInput,
  CreatedKey,
  CreateTenantInput,
  Delivery,
  DeliveryListParams,
  DeliveryWithAttempts,
  Destination,
  DestinationOverview,
  DestinationSecrets,
  DestinationStats,
  DestinationWithSecret,
  Event,
  EventListParams,
  HealthParams,
  HealthWithTransitions,
  ListParams,
  LoggedEvent,
  NewEvent,
  OverviewParams,
  Page,
  Preview,
  PreviewInput,
  ReplayInput,
  ReplayResult,
  RotatedSecret,
  StatsParams,
  Tenant,
  TenantKey,
  TenantWithKey,
  TestEventInput,
  UpdateDestinationInput,
  UpdateTenantInput,
} from './types.ts';

/** Options of the calls that act for a tenant: the admin token must name it. */
export interface TenantCallOptions extends CallOptions {
  /** Overrides the client's `tenantId` for this call (admin token only). */
  tenantId?: string;
}

/** What the resources need from the client. */
export interface Transport {
  call<T>(method: string, path: string, spec?: RequestSpec): Promise<T>;
  /** The `tenantId` a tenant-scoped call sends: the call's, else the client's. */
  tenantId(options: TenantCallOptions | undefined): string | undefined;
}

/** Every page of a list, from `params.cursor` (or the start) to the last. */
async function* walk<T>(
  fetchPage: (cursor: string | undefined) => Promise<Page<T>>,
  cursor: string | undefined,
): AsyncGenerator<Page<T>, void, undefined> {
  let next = cursor;
  for (;;) {
    const page = await fetchPage(next);
    yield page;
    if (page.nextCursor === null || page.data.length === 0) return;
    next = page.nextCursor;
  }
}

async function* itemsOf<T>(pages: AsyncIterable<Page<T>>): AsyncGenerator<T, void, undefined> {
  for await (const page of pages) yield* page.data;
}

const listQuery = (params: ListParams = {}): Query => ({ limit: params.limit, cursor: params.cursor });

/** `/v1/tenants`: admin token only. */
export class Tenants {
  readonly #t: Transport;
  constructor(transport: Transport) {
    this.#t = transport;
  }

  /** Creates a tenant; its `apiKey` is in this answer only. */
  create(input: CreateTenantInput, options?: CallOptions): Promise<TenantWithKey> {
    return this.#t.call('POST', '/v1/tenants', { ...pick(options), body: input });
  }

  list(params?: ListParams, options?: CallOptions): Promise<Page<Tenant>> {
    return this.#t.call('GET', '/v1/tenants', { ...pick(options), query: listQuery(params) });
  }

  pages(params: ListParams = {}, options?: CallOptions): AsyncGenerator<Page<Tenant>, void, undefined> {
    return walk((cursor) => this.list({ ...params, cursor }, options), params.cursor);
  }

  listAll(params?: ListParams, options?: CallOptions): AsyncGenerator<Tenant, void, undefined> {
    return itemsOf(this.pages(params, options));
  }

  get(id: string, options?: CallOptions): Promise<Tenant> {
    return this.#t.call('GET', `/v1/tenants/${seg(id)}`, pick(options));
  }

  /** Changes a tenant's name or quotas; a quota set to null falls back to the operator-wide default. */
  update(id: string, patch: UpdateTenantInput, options?: CallOptions): Promise<Tenant> {
    return this.#t.call('PATCH', `/v1/tenants/${seg(id)}`, { ...pick(options), body: patch });
  }

  /** Deletes a tenant: its keys stop working, its destinations are deleted (undelivered deliveries cancelled). */
  async delete(id: string, options?: CallOptions): Promise<void> {
    await this.#t.call('DELETE', `/v1/tenants/${seg(id)}`, pick(options));
  }

  /** Creates another API key for the tenant; its `apiKey` is in this answer only. */
  createKey(tenantId: string, options?: CallOptions): Promise<CreatedKey> {
    return this.#t.call('POST', `/v1/tenants/${seg(tenantId)}/keys`, pick(options));
  }

  /** The tenant's API keys, oldest first: ids and prefixes, never the keys. */
  async listKeys(tenantId: string, options?: CallOptions): Promise<TenantKey[]> {
    const page = await this.#t.call<{ data: TenantKey[] }>(
      'GET',
      `/v1/tenants/${seg(tenantId)}/keys`,
      pick(options),
    );
    return page.data;
  }

  /** Deletes an API key, refused at once; the tenant's last key cannot be (`conflict`). */
  async deleteKey(tenantId: string, keyId: string, options?: CallOptions): Promise<void> {
    await this.#t.call('DELETE', `/v1/tenants/${seg(tenantId)}/keys/${seg(keyId)}`, pick(options));
  }
}

/** `/v1/destinations`. */
export class Destinations {
  readonly #t: Transport;
  constructor(transport: Transport) {
    this.#t = transport;
  }

  /** Creates a destination; the answer includes its signing secret (generated unless given). */
  create(input: CreateDestinationInput, options?: TenantCallOptions): Promise<DestinationWithSecret> {
    const query = { tenantId: this.#t.tenantId(options) };
    return this.#t.call('POST', '/v1/destinations', { ...pick(options), query, body: input });
  }

  list(params?: ListParams, options?: TenantCallOptions): Promise<Page<Destination>> {
    const query = { ...listQuery(params), tenantId: this.#t.tenantId(options) };
    return this.#t.call('GET', '/v1/destinations', { ...pick(options), query });
  }

  pages(params: ListParams = {}, options?: TenantCallOptions): AsyncGenerator<Page<Destination>, void> {
    return walk((cursor) => this.list({ ...params, cursor }, options), params.cursor);
  }

  listAll(params?: ListParams, options?: TenantCallOptions): AsyncGenerator<Destination, void, undefined> {
    return itemsOf(this.pages(params, options));
  }

  get(id: string, options?: CallOptions): Promise<Destination> {
    return this.#t.call('GET', `/v1/destinations/${seg(id)}`, pick(options));
  }

  /** Changes any of the fields given; a new `rateLimit` is in force within one tick. */
  update(id: string, patch: UpdateDestinationInput, options?: CallOptions): Promise<Destination> {
    return this.#t.call('PATCH', `/v1/destinations/${seg(id)}`, { ...pick(options), body: patch });
  }

  /** Deletes it; its undelivered deliveries become `cancelled`. */
  async delete(id: string, options?: CallOptions): Promise<void> {
    await this.#t.call('DELETE', `/v1/destinations/${seg(id)}`, pick(options));
  }

  /** Keeps accepting events for it, delivers nothing until `resume`. */
  pause(id: string, options?: CallOptions): Promise<Destination> {
    return this.#t.call('POST', `/v1/destinations/${seg(id)}/pause`, pick(options));
  }

  /** Its endpoint health (the circuit breaker) and the latest transitions. */
  health(id: string, params: HealthParams = {}, options?: TenantCallOptions): Promise<HealthWithTransitions> {
    const query = { limit: params.limit, tenantId: this.#t.tenantId(options) };
    return this.#t.call('GET', `/v1/destinations/${seg(id)}/health`, { ...pick(options), query });
  }

  /** Resumes a paused destination, or one disabled by a `410`; closes its circuit too. */
  resume(id: string, options?: CallOptions): Promise<Destination> {
    return this.#t.call('POST', `/v1/destinations/${seg(id)}/resume`, pick(options));
  }

  /**
   * Its signing secrets: the current one and those rotated out less than 24 h ago. The only
   * read that returns them (a destination's `get` and `list` never do).
   */
  secret(id: string, options?: CallOptions): Promise<DestinationSecrets> {
    return this.#t.call('GET', `/v1/destinations/${seg(id)}/secret`, pick(options));
  }

  /**
   * Sends a test event to this destination only, through its limiter like any event: type
   * `sluice.test` unless given; without a payload, the type's catalog example (a built-in
   * type's with this destination's ids), else `{ test: true }`.
   */
  test(id: string, input: TestEventInput = {}, options?: CallOptions): Promise<AcceptedEvent> {
    return this.#t.call('POST', `/v1/destinations/${seg(id)}/test`, { ...pick(options), body: input });
  }

  /**
   * What it would send for an event — whether it matches its eventTypes and filter, and the
   * headers and body its transform makes, before signing — or why nothing would be sent.
   * `input.filter` / `input.transform` are tried instead of its own. Nothing is sent.
   */
  preview(id: string, input: PreviewInput, options?: CallOptions): Promise<Preview> {
    return this.#t.call('POST', `/v1/destinations/${seg(id)}/preview`, { ...pick(options), body: input });
  }

  /** A new signing secret; the previous one keeps signing beside it for 24 h. */
  rotateSecret(id: string, options?: CallOptions): Promise<RotatedSecret> {
    return this.#t.call('POST', `/v1/destinations/${seg(id)}/rotate-secret`, pick(options));
  }

  /** Puts its dead deliveries (those that died at or after `since`) back to pending. */
  replay(id: string, input: ReplayInput = {}, options?: CallOptions): Promise<ReplayResult> {
    const body = { ...input, status: input.status ?? 'dead' };
    return this.#t.call('POST', `/v1/destinations/${seg(id)}/replay`, { ...pick(options), body });
  }

  /** A page of destinations, each with its backlog and outcomes over the last `seconds` (default 3600). */
  overview(params: OverviewParams = {}, options?: TenantCallOptions): Promise<Page<DestinationOverview>> {
    const query = { ...listQuery(params), seconds: params.seconds, tenantId: this.#t.tenantId(options) };
    return this.#t.call('GET', '/v1/destinations/stats', { ...pick(options), query });
  }

  /** Backlog, outcomes and the rate-limit compliance audit over the last `seconds`. */
  stats(id: string, params: StatsParams = {}, options?: TenantCallOptions): Promise<DestinationStats> {
    const query = { seconds: params.seconds, tenantId: this.#t.tenantId(options) };
    return this.#t.call('GET', `/v1/destinations/${seg(id)}/stats`, { ...pick(options), query });
  }
}

/** `/v1/events`. */
export class Events {
  readonly #t: Transport;
  constructor(transport: Transport) {
    this.#t = transport;
  }

  /**
   * Accepts an event: durable before the answer. To `destinationId`/`destinationIds`, or
   * else to every destination whose `eventTypes` match its `type`. The same
   * `idempotencyKey` again returns the first answer and creates nothing.
   */
  send(event: NewEvent, options?: TenantCallOptions): Promise<AcceptedEvent> {
    const query = { tenantId: this.#t.tenantId(options) };
    return this.#t.call('POST', '/v1/events', { ...pick(options), query, body: event });
  }

  /** Up to 1,000 events in one transaction, all or nothing; one result per event, in order. */
  sendBatch(events: NewEvent[], options?: TenantCallOptions): Promise<AcceptedEventBatch> {
    const query = { tenantId: this.#t.tenantId(options) };
    return this.#t.call('POST', '/v1/events/batch', { ...pick(options), query, body: { events } });
  }

  /** The event with its payload and its deliveries. */
  get(id: string, options?: CallOptions): Promise<Event> {
    return this.#t.call('GET', `/v1/events/${seg(id)}`, pick(options));
  }

  /**
   * The event log: newest first, by `type` (or `prefix.*`), `destinationId`, `since` and
   * `until`; each event with its payload's size, not the payload (`get` reads one).
   */
  list(params: EventListParams = {}, options?: TenantCallOptions): Promise<Page<LoggedEvent>> {
    const query = {
      ...listQuery(params),
      type: params.type,
      destinationId: params.destinationId,
      since: params.since,
      until: params.until,
      tenantId: this.#t.tenantId(options),
    };
    return this.#t.call('GET', '/v1/events', { ...pick(options), query });
  }

  pages(params: EventListParams = {}, options?: TenantCallOptions): AsyncGenerator<Page<LoggedEvent>, void> {
    return walk((cursor) => this.list({ ...params, cursor }, options), params.cursor);
  }

  listAll(
    params?: EventListParams,
    options?: TenantCallOptions,
  ): AsyncGenerator<LoggedEvent, void, undefined> {
    return itemsOf(this.pages(params, options));
  }
}

/** `/v1/deliveries`. */
export class Deliveries {
  readonly #t: Transport;
  constructor(transport: Transport) {
    this.#t = transport;
  }

  /** Newest first, filtered by `destinationId`, `eventId`, `status` and `since` (last change). */
  list(params: DeliveryListParams = {}, options?: TenantCallOptions): Promise<Page<Delivery>> {
    const query = {
      ...listQuery(params),
      destinationId: params.destinationId,
      eventId: params.eventId,
      status: params.status,
      since: params.since,
      tenantId: this.#t.tenantId(options),
    };
    return this.#t.call('GET', '/v1/deliveries', { ...pick(options), query });
  }

  pages(params: DeliveryListParams = {}, options?: TenantCallOptions): AsyncGenerator<Page<Delivery>, void> {
    return walk((cursor) => this.list({ ...params, cursor }, options), params.cursor);
  }

  listAll(params?: DeliveryListParams, options?: TenantCallOptions): AsyncGenerator<Delivery, void> {
    return itemsOf(this.pages(params, options));
  }

  /** The delivery with every attempt (status code, latency, error, response excerpt, times). */
  get(id: string, options?: CallOptions): Promise<DeliveryWithAttempts> {
    return this.#t.call('GET', `/v1/deliveries/${seg(id)}`, pick(options));
  }

  /** Attempts a dead or pending delivery now, with a fresh attempt budget (`409` otherwise). */
  retry(id: string, options?: CallOptions): Promise<Delivery> {
    return this.#t.call('POST', `/v1/deliveries/${seg(id)}/retry`, pick(options));
  }
}

/** `/v1/alerts`: the backlog alerts firing now (ADR 0009). */
export class Alerts {
  readonly #t: Transport;
  constructor(transport: Transport) {
    this.#t = transport;
  }

  /** Firing alerts by destination then kind: a tenant key's own, or (admin) all or one tenant's. */
  async list(options?: TenantCallOptions): Promise<Alert[]> {
    const query = { tenantId: this.#t.tenantId(options) };
    const body = await this.#t.call<{ data: Alert[] }>('GET', '/v1/alerts', { ...pick(options), query });
    return body.data;
  }
}
