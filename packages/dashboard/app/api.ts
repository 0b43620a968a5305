/**
 * The dashboard's only way to the server: the v1 API (docs/api.md) with the token the
 * operator typed, kept in sessionStorage (gone when the tab closes). Errors arrive as
 * `{error: {code, message}}` and are thrown as `ApiError`. A `503 unavailable` (the store or
 * Redis down) is also remembered until the next other answer: the page shows a banner.
 */

export type Role = 'admin' | 'tenant' | 'portal';

// The API's shapes come from the typed client, whose types the typecheck holds to the
// server's zod contract: type-only, erased from the bundle, and never a second copy to drift.
import type {
  Alert,
  Attempt,
  CreateDestinationInput,
  Delivery,
  DeliveryStatus,
  Destination,
  DestinationOverview,
  DestinationStats,
  DestinationWithSecret,
  Event,
  EventListParams,
  EventType,
  HealthState,
  HealthWithTransitions,
  LoggedEvent,
  Page,
  Period,
  Preview,
  PreviewInput,
  RateLimit,
  Tenant,
  UpdateDestinationInput,
} from '@sluice/client';

export type Ordering = Destination['ordering'];

export type {
  Alert,
  Attempt,
  Delivery,
  DeliveryStatus,
  Destination,
  DestinationOverview,
  DestinationWithSecret,
  Event,
  EventListParams,
  EventType,
  HealthState,
  HealthWithTransitions,
  Page,
  Period,
  Preview,
  RateLimit,
  Tenant,
};
export type NewDestinationInput = CreateDestinationInput;
/** A destination's backlog and recent outcomes, as the table shows them. */
export type Backlog = DestinationOverview['stats'];
export type Stats = DestinationStats;

export class ApiError extends Error {
  readonly status: number;
  readonly code: string;
  constructor(status: number, code: string, message: string) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

/**
 * The portal (`/portal/`, a link's token from the URL's fragment) keeps its token under its
 * own key, so a portal tab and an operator's tab of the same origin never share one.
 */
export const isPortal = (): boolean => location.pathname.startsWith('/portal');
const TOKEN_KEY = isPortal() ? 'sluice.portal.token' : 'sluice.token';

/**
 * The token: this tab's sessionStorage (never a cookie or localStorage). Where storage is
 * refused (a storage-blocked cross-site iframe throws on access, as headless Chromium's
 * does), the page's memory, and for the portal also the frame's history entry
 * (`history.state`): a reload of the frame restores it, it is never sent to a server, a page
 * of another origin cannot read it, and it goes with the entry when the frame navigates away.
 */
let memoryToken: string | null = null;
const STATE_KEY = 'sluicePortalToken';
const storage = (): Storage | null => {
  try {
    return sessionStorage;
  } catch {
    return null;
  }
};
const stateToken = (): string | null => {
  const state: unknown = history.state;
  const token =
    isPortal() && typeof state === 'object' && state !== null
      ? (state as Record<string, unknown>)[STATE_KEY]
      : null;
  return typeof token === 'string' ? token : null;
};
/** Keeps the token in the current history entry (each hash route is a new one). */
const stateKeep = (token: string | null) =>
  history.replaceState(token === null ? null : { [STATE_KEY]: token }, '');
export const savedToken = (): string | null => storage()?.getItem(TOKEN_KEY) ?? memoryToken ?? stateToken();
export function saveToken(token: string): void {
  memoryToken = token;
  try {
    const kept = storage();
    if (kept === null) throw new Error('no storage');
    kept.setItem(TOKEN_KEY, token);
  } catch {
    // full or refused: the page's memory keeps it, and the portal's history entries
    if (!isPortal()) return;
    stateKeep(token);
    addEventListener('hashchange', () => {
      if (memoryToken !== null) stateKeep(memoryToken);
    });
  }
}
export function forgetToken(): void {
  memoryToken = null;
  storage()?.removeItem(TOKEN_KEY);
  if (stateToken() !== null) stateKeep(null);
}

/** The `Retry-After` seconds of the last answer when it was `503 unavailable`; null otherwise. */
type Outage = number | null;
let outage: Outage = null;
const outageListeners = new Set<(outage: Outage) => void>();

function setOutage(next: Outage): void {
  if (next === outage) return;
  outage = next;
  for (const listener of outageListeners) listener(outage);
}

/** Calls `listener` now and on every change of the outage state; returns how to stop. */
export function watchOutage(listener: (outage: Outage) => void): () => void {
  outageListeners.add(listener);
  listener(outage);
  return () => outageListeners.delete(listener);
}

/** Told of every `401 unauthorized`: the portal shows its "link expired or revoked" page. */
const unauthorizedListeners = new Set<() => void>();
export function onUnauthorized(listener: () => void): () => void {
  unauthorizedListeners.add(listener);
  return () => unauthorizedListeners.delete(listener);
}

type Query = Record<string, string | number | undefined>;

function withQuery(path: string, query: Query = {}): string {
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(query))
    if (value !== undefined && value !== '') params.set(key, String(value));
  const text = params.toString();
  return text ? `${path}?${text}` : path;
}

export async function call<T>(
  method: string,
  path: string,
  options: { query?: Query; body?: unknown; token?: string } = {},
): Promise<T> {
  const token = options.token ?? savedToken() ?? '';
  const headers: Record<string, string> = { authorization: `Bearer ${token}` };
  if (options.body !== undefined) headers['content-type'] = 'application/json';
  const response = await fetch(withQuery(path, options.query), {
    method,
    headers,
    body: options.body === undefined ? null : JSON.stringify(options.body),
  });
  if (response.status === 204) {
    setOutage(null);
    return undefined as T;
  }
  const body = (await response.json().catch(() => null)) as {
    error?: { code: string; message: string };
  } | null;
  const unavailable = response.status === 503 && body?.error?.code === 'unavailable';
  setOutage(unavailable ? Number(response.headers.get('retry-after')) || 5 : null);
  if (!response.ok) {
    if (response.status === 401) for (const listener of unauthorizedListeners) listener();
    const error = body?.error ?? { code: 'internal', message: `HTTP ${response.status}` };
    throw new ApiError(response.status, error.code, error.message);
  }
  return body as T;
}

/** A portal link's rights and branding (`GET /v1/whoami`). */
export interface PortalGrant {
  id: string;
  access: 'read' | 'manage';
  /** Null: every destination of the tenant. */
  destinationIds: string[] | null;
  branding: { title?: string; accentColor?: string; logoUrl?: string } | null;
  expiresAt: string;
}

/** Who the token is (`GET /v1/whoami`): the operator, a tenant (its API key) or a portal link. */
export interface Identity {
  role: Role;
  tenant: { id: string; name: string } | null;
  portal: PortalGrant | null;
}

/**
 * Who the token is. `GET /v1/whoami` says; where the API has none yet (404), the operator is
 * told from a tenant key by whether `GET /v1/tenants` (admin only) answers, without a name.
 */
export async function whoAmI(token: string): Promise<Identity> {
  try {
    return await call<Identity>('GET', '/v1/whoami', { token });
  } catch (err) {
    if (!(err instanceof ApiError && err.status === 404)) throw err;
  }
  try {
    await call('GET', '/v1/tenants', { query: { limit: 1 }, token });
    return { role: 'admin', tenant: null, portal: null };
  } catch (err) {
    if (err instanceof ApiError && err.status === 403) return { role: 'tenant', tenant: null, portal: null };
    throw err;
  }
}

export const api = {
  tenants: () => call<Page<Tenant>>('GET', '/v1/tenants', { query: { limit: 500 } }),
  overview: (tenantId?: string) =>
    call<Page<DestinationOverview>>('GET', '/v1/destinations/stats', {
      query: { limit: 500, seconds: 3600, tenantId },
    }),
  /** Backlog alerts firing now (ADR 0009). */
  alerts: (tenantId?: string) => call<{ data: Alert[] }>('GET', '/v1/alerts', { query: { tenantId } }),
  create: (input: NewDestinationInput, tenantId?: string) =>
    call<DestinationWithSecret>('POST', '/v1/destinations', { body: input, query: { tenantId } }),
  destination: (id: string) => call<Destination>('GET', `/v1/destinations/${id}`),
  stats: (id: string, seconds: number) =>
    call<Stats>('GET', `/v1/destinations/${id}/stats`, { query: { seconds } }),
  health: (id: string) =>
    call<HealthWithTransitions>('GET', `/v1/destinations/${id}/health`, { query: { limit: 10 } }),
  update: (id: string, patch: UpdateDestinationInput) =>
    call<Destination>('PATCH', `/v1/destinations/${id}`, { body: patch }),
  remove: (id: string) => call<undefined>('DELETE', `/v1/destinations/${id}`),
  /** The catalog: the operator's event types and Sluice's own `sluice.*` ones. */
  eventTypes: () => call<Page<EventType>>('GET', '/v1/event-types', { query: { limit: 500 } }),
  /** The event log, newest first (a tenant's: the admin token names it with `tenantId`). */
  events: (query: EventListParams & { tenantId?: string }) =>
    call<Page<LoggedEvent>>('GET', '/v1/events', { query: { limit: 25, ...query } }),
  /** Sends the catalog's example of `type` (or `payload`) to one destination, paced like any event. */
  test: (id: string, body: { type?: string; payload?: unknown }) =>
    call<{ id: string; deliveries: { id: string }[] }>('POST', `/v1/destinations/${id}/test`, { body }),
  /** What it would send for an event: its filter and transform, or the ones given to try; nothing is sent. */
  preview: (id: string, body: PreviewInput) =>
    call<Preview>('POST', `/v1/destinations/${id}/preview`, { body }),
  pause: (id: string) => call<Destination>('POST', `/v1/destinations/${id}/pause`),
  resume: (id: string) => call<Destination>('POST', `/v1/destinations/${id}/resume`),
  /** The one read that returns signing secrets (stored encrypted; never in a destination's read). */
  secret: (id: string) =>
    call<{ secret: string; previous: { secret: string; expiresAt: string }[] }>(
      'GET',
      `/v1/destinations/${id}/secret`,
    ),
  rotateSecret: (id: string) =>
    call<{ secret: string; previousSecretExpiresAt: string | null }>(
      'POST',
      `/v1/destinations/${id}/rotate-secret`,
    ),
  replay: (id: string, since?: string) =>
    call<{ count: number }>('POST', `/v1/destinations/${id}/replay`, {
      body: since ? { status: 'dead', since } : { status: 'dead' },
    }),
  deliveries: (query: {
    destinationId?: string;
    status?: DeliveryStatus;
    since?: string;
    tenantId?: string;
    limit?: number;
  }) => call<Page<Delivery>>('GET', '/v1/deliveries', { query: { limit: 50, ...query } }),
  delivery: (id: string) => call<Delivery & { attempts: Attempt[] }>('GET', `/v1/deliveries/${id}`),
  retry: (id: string) => call<Delivery>('POST', `/v1/deliveries/${id}/retry`),
  event: (id: string) => call<Event>('GET', `/v1/events/${id}`),
};
