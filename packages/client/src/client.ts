/**
 * `Sluice`: the client. One instance per token; `forTenant` derives one that acts for a
 * tenant (admin token). It holds no connection of its own: requests go through `fetch`
 * (the global one unless another is given), so connection pooling and proxies are the
 * fetch implementation's.
 */

import { EventTypes } from './event-types.ts';
import { type CallOptions, type FetchLike, type HttpConfig, type RequestSpec, send } from './http.ts';
import { PortalLinks } from './portal.ts';
import { Alerts, Deliveries, Destinations, Events, type TenantCallOptions, Tenants } from './resources.ts';
import type { Whoami } from './types.ts';

export interface SluiceOptions {
  /** Where the API is, e.g. `http://127.0.0.1:3000` (a path prefix is kept). */
  baseUrl: string;
  /** A tenant's API key, or the operator's admin token. */
  token?: string;
  /** The `fetch` to send with; the global `fetch` by default. */
  fetch?: FetchLike;
  /** Per-request timeout in ms (default 30,000; 0 for none). */
  timeout?: number;
  /**
   * With the admin token: the tenant that tenant-scoped calls act for (`?tenantId=`).
   * Creating a destination or sending an event with the admin token needs one.
   */
  tenantId?: string;
  /** Headers sent with every request (a tracing header, say). */
  headers?: Record<string, string>;
}

export const DEFAULT_TIMEOUT_MS = 30_000;

export class Sluice {
  /** Tenants: admin token only. */
  readonly tenants: Tenants;
  readonly destinations: Destinations;
  readonly events: Events;
  readonly deliveries: Deliveries;
  readonly alerts: Alerts;
  /** The event-type catalog: any token reads it, the admin token changes it. */
  readonly eventTypes: EventTypes;
  /** Portal links: a tenant's key (or the admin token for a tenant) makes, lists and revokes them. */
  readonly portalLinks: PortalLinks;
  readonly #options: SluiceOptions;
  readonly #http: HttpConfig;

  constructor(options: SluiceOptions) {
    if (!options.baseUrl) throw new TypeError('Sluice: baseUrl is required');
    const fetchImpl = options.fetch ?? (globalThis.fetch as FetchLike | undefined);
    if (fetchImpl === undefined) throw new TypeError('Sluice: no global fetch; pass options.fetch');
    this.#options = { ...options };
    this.#http = {
      baseUrl: options.baseUrl,
      token: options.token,
      fetch: fetchImpl,
      timeout: options.timeout ?? DEFAULT_TIMEOUT_MS,
      headers: { ...options.headers },
    };
    const transport = {
      call: <T>(method: string, path: string, spec?: RequestSpec) => this.request<T>(method, path, spec),
      tenantId: (o: TenantCallOptions | undefined) => o?.tenantId ?? this.#options.tenantId,
    };
    this.tenants = new Tenants(transport);
    this.destinations = new Destinations(transport);
    this.events = new Events(transport);
    this.deliveries = new Deliveries(transport);
    this.alerts = new Alerts(transport);
    this.eventTypes = new EventTypes(transport);
    this.portalLinks = new PortalLinks(transport);
  }

  /** The tenant this client acts for with the admin token, if any. */
  get tenantId(): string | undefined {
    return this.#options.tenantId;
  }

  /** A client with the same options that acts for `tenantId` (admin token). */
  forTenant(tenantId: string): Sluice {
    return new Sluice({ ...this.#options, tenantId });
  }

  /** A client with the same options and another token. */
  withToken(token: string): Sluice {
    return new Sluice({ ...this.#options, token });
  }

  /** Who this client's token is: the operator, a tenant's key or a portal link's token (`GET /v1/whoami`). */
  whoami(options?: CallOptions): Promise<Whoami> {
    return this.request('GET', '/v1/whoami', options);
  }

  /** The server's OpenAPI 3.1 document (`GET /openapi.json`). */
  openapi(options?: CallOptions): Promise<Record<string, unknown>> {
    return this.request('GET', '/openapi.json', options);
  }

  /**
   * Any request, for what the typed methods do not cover: resolves with the parsed JSON
   * answer of a 2xx, throws a `SluiceError` otherwise.
   */
  request<T = unknown>(method: string, path: string, spec?: RequestSpec): Promise<T> {
    return send<T>(this.#http, method, path, spec);
  }
}
