/**
 * The API tests' side of a box: `@sluice/client` instances over an undici pool that the box
 * owns (closed with it, so no keep-alive socket outlives a test), a box per test file
 * (`fileBox`), the store read read-only, and the route table the contract and OpenAPI
 * tests share.
 */

import assert from 'node:assert/strict';
import { after, before } from 'node:test';
import { type FetchLike, Sluice, SluiceError, type SluiceOptions, type TenantWithKey } from '@sluice/client';
import { Agent, fetch as undiciFetch } from 'undici';
import { assertNoLeaks } from './leaks.ts';
import { type Arrival, type Receiver, startReceiver } from './receiver.ts';
import { type BoxOptions, type ShapeBox, startShape } from './shape.ts';
import { randomToken, waitUntil } from './sluice.ts';

export type { BoxOptions };

/** A request a client of the box sent, and the status it got (0: no answer). */
interface Call {
  method: string;
  /** The path without the query. */
  path: string;
  status: number;
}

export interface ApiBox {
  url: string;
  adminToken: string;
  /** SQL on the store (`?` placeholders), the same tables in both shapes. */
  query: ShapeBox['query'];
  rcv: Receiver;
  /** Every request the clients sent, in order: the typed methods do not return statuses. */
  calls: Call[];
  /** The last request sent. */
  last(): Call;
  /** The admin token's client. */
  admin: Sluice;
  /** A client with any token (or none), on this box's pool. */
  client(token: string | undefined, options?: Partial<SluiceOptions>): Sluice;
  /** A new tenant and its client. */
  tenant(name?: string): Promise<{ tenant: TenantWithKey; api: Sluice }>;
  /**
   * Stops the box, runs `meanwhile` (with nothing running on the store), and starts it
   * again on the same state, port and admin token: clients made before still work.
   */
  restart(meanwhile?: () => Promise<void>): Promise<void>;
  /** The settings that name this box's state (`SLUICE_DATA_DIR`, or the database and prefix). */
  childEnv(): Record<string, string>;
  close(): Promise<void>;
}

/** Sluice in the shape under test on fresh state, a receiver, and clients. */
async function startApiBox(opts: BoxOptions = {}): Promise<ApiBox> {
  const rcv = await startReceiver();
  let box: ShapeBox;
  try {
    box = await startShape(opts, randomToken());
  } catch (err) {
    await rcv.close();
    throw err;
  }
  const { url, adminToken } = box;
  const agent = new Agent({ connections: 64, keepAliveTimeout: 1_000 });
  const calls: Call[] = [];
  const fetch: FetchLike = async (target, init) => {
    const call = { method: init.method, path: new URL(target).pathname, status: 0 };
    calls.push(call);
    const res = await undiciFetch(target, { ...init, dispatcher: agent });
    call.status = res.status;
    return res;
  };
  const client = (token: string | undefined, options: Partial<SluiceOptions> = {}) =>
    new Sluice({ baseUrl: url, fetch, timeout: 30_000, ...(token ? { token } : {}), ...options });
  const admin = client(adminToken);
  let n = 0;
  return {
    url,
    adminToken,
    query: box.query,
    rcv,
    calls,
    last: () => {
      const call = calls.at(-1);
      if (call === undefined) throw new Error('no request was sent');
      return call;
    },
    admin,
    client,
    tenant: async (name = `tenant-${++n}`) => {
      const tenant = await admin.tenants.create({ name });
      return { tenant, api: client(tenant.apiKey) };
    },
    restart: (meanwhile) => box.restart(meanwhile),
    childEnv: () => box.childEnv(),
    close: async () => {
      await agent.close().catch(() => agent.destroy());
      await box.close();
      await rcv.close();
    },
  };
}

/**
 * One box for the whole test file: started before the first test, closed after the last,
 * and then no loop, socket or timer may be left (`assertNoLeaks`).
 */
export function fileBox(opts: BoxOptions = {}): () => ApiBox {
  let current: ApiBox | undefined;
  before(async () => {
    current = await startApiBox(opts);
  });
  after(async () => {
    await current?.close();
    current = undefined;
    await assertNoLeaks();
  });
  return () => {
    if (current === undefined) throw new Error('the file box is not running');
    return current;
  };
}

/**
 * A destination of `api`'s tenant that holds one dead delivery and is then paused, so that
 * nothing more happens to it by itself: what a wrongly accepted request would change.
 */
export async function quietDestinationWithDeadDelivery(
  b: ApiBox,
  api: Sluice,
  name: string,
): Promise<{ dst: string; evt: string; dlv: string }> {
  const path = b.rcv.path(name);
  await b.rcv.setDefault(path, 500);
  const d = await api.destinations.create({
    url: b.rcv.url(name),
    rateLimit: { limit: 10, period: 'second' },
    retry: { maxAttempts: 1, initialDelayMs: 0, maxDelayMs: 0 },
  });
  const sent = await api.events.send({ type: 'order.paid', payload: { name }, destinationId: d.id });
  const dlv = sent.deliveries[0]!.id;
  await waitUntil(
    async () => (await api.deliveries.get(dlv)).status === 'dead',
    15_000,
    `${name}: a dead delivery`,
  );
  await api.destinations.pause(d.id);
  return { dst: d.id, evt: sent.id, dlv };
}

/** Awaits `promise`, which must reject with a `SluiceError` of `status` and `code`. */
export async function rejectsWith(
  promise: Promise<unknown>,
  status: number,
  code: string,
  what = 'the request',
): Promise<SluiceError> {
  try {
    const value = await promise;
    assert.fail(`${what}: expected ${status} ${code}, got success ${JSON.stringify(value)?.slice(0, 300)}`);
  } catch (err) {
    if (!(err instanceof SluiceError)) throw err;
    const seen = `${err.status} ${err.code} ${err.message} ${JSON.stringify(err.details)}`;
    assert.equal(err.status, status, `${what}: ${seen}`);
    assert.equal(err.code, code, `${what}: ${seen}`);
    assert.equal(typeof err.message, 'string', `${what}: error.message`);
    return err;
  }
}

const TABLES = ['tenants', 'destinations', 'events', 'deliveries', 'attempts', 'portal_links'] as const;

/** Every row of every table: equal snapshots mean nothing changed. */
export async function snapshot(b: { query: ShapeBox['query'] }): Promise<Record<string, unknown[]>> {
  const out: Record<string, unknown[]> = {};
  for (const t of TABLES) out[t] = await b.query(`SELECT * FROM ${t} ORDER BY id`);
  return out;
}

/** The string headers of an arrival, as `standardwebhooks` takes them. */
export function headersOf(a: Arrival): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(a.headers)) if (typeof v === 'string') out[k] = v;
  return out;
}

/** An id of the same shape as `id` that names nothing. */
export const unknownLike = (id: string): string => id.slice(0, -1) + (id.endsWith('0') ? '1' : '0');

/** Collects an async iterable. */
export async function collect<T>(items: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of items) out.push(item);
  return out;
}

/**
 * Every route of docs/api.md that the server serves under `/v1`, as OpenAPI writes paths. The
 * contract test calls each one; the OpenAPI test checks the document lists exactly these.
 */
export const ROUTES = [
  'POST /v1/tenants',
  'GET /v1/tenants',
  'GET /v1/tenants/{id}',
  'PATCH /v1/tenants/{id}',
  'DELETE /v1/tenants/{id}',
  'POST /v1/tenants/{id}/keys',
  'GET /v1/tenants/{id}/keys',
  'DELETE /v1/tenants/{id}/keys/{keyId}',
  'POST /v1/destinations',
  'GET /v1/destinations',
  'GET /v1/destinations/{id}',
  'PATCH /v1/destinations/{id}',
  'DELETE /v1/destinations/{id}',
  'POST /v1/destinations/{id}/pause',
  'POST /v1/destinations/{id}/preview',
  'POST /v1/destinations/{id}/resume',
  'POST /v1/destinations/{id}/rotate-secret',
  'GET /v1/destinations/{id}/secret',
  'POST /v1/destinations/{id}/replay',
  'GET /v1/destinations/{id}/stats',
  'GET /v1/destinations/{id}/health',
  'GET /v1/destinations/stats',
  'POST /v1/events',
  'POST /v1/events/batch',
  'GET /v1/events',
  'GET /v1/events/{id}',
  'GET /v1/deliveries',
  'GET /v1/deliveries/{id}',
  'POST /v1/deliveries/{id}/retry',
  'GET /v1/alerts',
  'POST /v1/event-types',
  'GET /v1/event-types',
  'GET /v1/event-types/{name}',
  'PATCH /v1/event-types/{name}',
  'DELETE /v1/event-types/{name}',
  'GET /v1/whoami',
  'POST /v1/destinations/{id}/test',
  'POST /v1/portal-links',
  'GET /v1/portal-links',
  'DELETE /v1/portal-links/{id}',
] as const;

/** A path as OpenAPI writes it: ids replaced by `{id}`, a key's by `{keyId}`, an event type's name by `{name}`. */
export const template = (path: string): string =>
  path
    .replace(/\/(ten|dst|evt|dlv|prt)_[0-9a-z]{26}/g, '/{id}')
    .replace(/\/key_[0-9a-z]{26}/g, '/{keyId}')
    .replace(/^\/v1\/event-types\/[^/?]+/, '/v1/event-types/{name}');

/** The most intervals [start, end) open at once. */
export function maxOverlap(intervals: readonly { start: number; end: number }[]): number {
  const edges = intervals.flatMap((i) => [
    { t: i.start, d: 1 },
    { t: i.end, d: -1 },
  ]);
  // An end and a start at the same instant: the end first (half-open intervals).
  edges.sort((a, b) => a.t - b.t || a.d - b.d);
  let open = 0;
  let most = 0;
  for (const e of edges) {
    open += e.d;
    most = Math.max(most, open);
  }
  return most;
}
