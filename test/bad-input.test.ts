/**
 * I8 — bad input. A malformed, mistyped, oversized, unauthorised or forbidden request gets a
 * clear 4xx with a machine-readable `error.code`, and changes nothing: the store is read
 * (read-only, with `node:sqlite`) before and after, and must be the same.
 */

import assert from 'node:assert/strict';
import type { TestContext } from 'node:test';
import { describe, it } from 'node:test';
import {
  type ApiError,
  type ApiResponse,
  createDestination,
  createTenant,
  harness,
  type Lookup,
  notFound,
  type Tenant,
  type TestBox,
} from './helpers/sluice.ts';

const TABLES = ['tenants', 'destinations', 'events', 'deliveries', 'attempts'] as const;

/** What the store holds: row counts, and the destinations as stored. */
async function snapshot(box: TestBox): Promise<unknown> {
  const counts: Record<string, number> = {};
  for (const t of TABLES) {
    const [row] = await box.query<{ n: number | string }>(`SELECT count(*) AS n FROM ${t}`);
    counts[t] = Number(row?.n);
  }
  return { counts, destinations: await box.query('SELECT * FROM destinations ORDER BY id') };
}

/** Resolves nothing anywhere: no test here may send a request off this machine. */
const nowhere: Lookup = (hostname, _options, callback) => {
  process.nextTick(() => callback(notFound(hostname), ''));
};

interface World {
  box: TestBox;
  a: Tenant;
  b: Tenant;
  /** A destination of tenant a, and one of tenant b. */
  dA: string;
  dB: string;
}

type Call = (w: World) => Promise<ApiResponse<unknown>>;

/** Private networks not allowed; two tenants with a destination each. */
async function world(t: TestContext): Promise<World> {
  const { box } = await harness(t, { SLUICE_ALLOW_PRIVATE_NETWORKS: 'false', lookup: nowhere });
  const a = await createTenant(box, box.adminToken, 'a');
  const b = await createTenant(box, box.adminToken, 'b');
  const rateLimit = { limit: 5, period: 'second' };
  const dA = (await createDestination(box, a.apiKey, { url: 'https://a.example.test/hook', rateLimit })).id;
  const dB = (await createDestination(box, b.apiKey, { url: 'https://b.example.test/hook', rateLimit })).id;
  return { box, a, b, dA, dB };
}

/** Each call must answer `status` with `code`, and leave the store as it was. */
function rejects(name: string, status: number, code: string, calls: Call[]): void {
  it(name, { timeout: 60_000 }, async (t) => {
    const w = await world(t);
    const before = await snapshot(w.box);
    for (const [i, call] of calls.entries()) {
      const res = await call(w);
      const what = `${name} (request ${i + 1}): ${res.status} ${JSON.stringify(res.body)}`;
      assert.equal(res.status, status, what);
      const body = res.body as Partial<ApiError>;
      assert.equal(body.error?.code, code, what);
      assert.equal(typeof body.error?.message, 'string', `${what}: error.message`);
    }
    assert.deepEqual(await snapshot(w.box), before, `${name} changed the store`);
  });
}

/** An id of the same shape as `id` that names nothing. */
const unknownLike = (id: string) => id.slice(0, -1) + (id.endsWith('0') ? '1' : '0');

const json = { 'content-type': 'application/json' };
const auth = (key: string) => ({ ...json, authorization: `Bearer ${key}` });
const event = (w: World, extra: Record<string, unknown> = {}) => ({
  type: 'order.paid',
  payload: { ok: true },
  destinationId: w.dA,
  ...extra,
});
const destination = (extra: Record<string, unknown> = {}) => ({
  url: 'https://c.example.test/hook',
  rateLimit: { limit: 5, period: 'second' },
  ...extra,
});

describe('bad input', () => {
  it('the store check sees a good request (control)', { timeout: 60_000 }, async (t) => {
    const w = await world(t);
    const before = await snapshot(w.box);
    const res = await w.box.api('POST', '/v1/events', event(w), w.a.apiKey);
    assert.equal(res.status, 202, JSON.stringify(res.body));
    assert.notDeepEqual(await snapshot(w.box), before, 'an accepted event shows in the store');
  });

  rejects('malformed JSON', 400, 'validation_failed', [
    (w) => w.box.raw('POST', '/v1/events', '{"type": "order.paid", "payload": {', auth(w.a.apiKey)),
    (w) => w.box.raw('POST', '/v1/destinations', '{url: https://x}', auth(w.a.apiKey)),
    (w) => w.box.raw('POST', '/v1/tenants', '{"name": "x"', auth(w.box.adminToken)),
  ]);

  rejects('wrong types', 400, 'validation_failed', [
    (w) => w.box.api('POST', '/v1/events', event(w, { type: 42 }), w.a.apiKey),
    (w) => w.box.api('POST', '/v1/events', event(w, { destinationId: 7 }), w.a.apiKey),
    (w) => w.box.api('POST', '/v1/events', [event(w)], w.a.apiKey),
    (w) =>
      w.box.api(
        'POST',
        '/v1/destinations',
        destination({ rateLimit: { limit: 'ten', period: 'second' } }),
        w.a.apiKey,
      ),
    (w) =>
      w.box.api(
        'POST',
        '/v1/destinations',
        destination({ rateLimit: { limit: 5, period: 'fortnight' } }),
        w.a.apiKey,
      ),
    (w) =>
      w.box.api(
        'POST',
        '/v1/destinations',
        destination({ rateLimit: { limit: 0, period: 'second' } }),
        w.a.apiKey,
      ),
    (w) => w.box.api('POST', '/v1/destinations', destination({ url: 12 }), w.a.apiKey),
    (w) => w.box.api('POST', '/v1/destinations', { url: 'https://c.example.test/hook' }, w.a.apiKey),
    (w) =>
      w.box.api(
        'PATCH',
        `/v1/destinations/${w.dA}`,
        { rateLimit: { limit: -1, period: 'second' } },
        w.a.apiKey,
      ),
    (w) => w.box.api('POST', '/v1/tenants', { name: 5 }, w.box.adminToken),
  ]);

  rejects('unknown fields', 400, 'validation_failed', [
    (w) => w.box.api('POST', '/v1/events', event(w, { priority: 'high' }), w.a.apiKey),
    (w) => w.box.api('POST', '/v1/destinations', destination({ colour: 'red' }), w.a.apiKey),
    (w) => w.box.api('PATCH', `/v1/destinations/${w.dA}`, { colour: 'red' }, w.a.apiKey),
  ]);

  rejects('a URL with a CR, LF, tab or space, or with credentials (even empty)', 400, 'validation_failed', [
    ...[
      'http://example.com/a\r\nX-Evil: 1',
      'http://example.com/a\tb',
      'http://example.com/a b',
      'http://:@example.com/',
      'http://user:pw@example.com/',
      'http://user@example.com/',
    ].map(
      (url): Call =>
        (w) =>
          w.box.api('POST', '/v1/destinations', destination({ url }), w.a.apiKey),
    ),
    (w) => w.box.api('PATCH', `/v1/destinations/${w.dA}`, { url: 'https://:@example.com/' }, w.a.apiKey),
  ]);

  rejects('a batch with one invalid event accepts none', 400, 'validation_failed', [
    (w) => w.box.api('POST', '/v1/events/batch', { events: [event(w), event(w, { type: 42 })] }, w.a.apiKey),
  ]);

  rejects('an unknown destination id on an event', 404, 'not_found', [
    (w) => w.box.api('POST', '/v1/events', event(w, { destinationId: unknownLike(w.dA) }), w.a.apiKey),
  ]);

  rejects('a payload over 256 KiB', 413, 'payload_too_large', [
    (w) =>
      w.box.api('POST', '/v1/events', event(w, { payload: { blob: 'x'.repeat(300 * 1024) } }), w.a.apiKey),
  ]);

  rejects('a missing token', 401, 'unauthorized', [
    (w) => w.box.api('POST', '/v1/events', event(w)),
    (w) => w.box.api('POST', '/v1/destinations', destination()),
    (w) => w.box.api('GET', `/v1/destinations/${w.dA}`),
    (w) => w.box.api('POST', '/v1/tenants', { name: 'x' }),
  ]);

  rejects('a wrong token', 401, 'unauthorized', [
    (w) => w.box.api('POST', '/v1/events', event(w), 'not-a-key'),
    (w) => w.box.api('POST', '/v1/events', event(w), `${w.a.apiKey}x`),
    (w) => w.box.api('POST', '/v1/tenants', { name: 'x' }, `${w.box.adminToken}x`),
    (w) => w.box.raw('POST', '/v1/events', JSON.stringify(event(w)), { ...json, authorization: w.a.apiKey }),
  ]);

  rejects('a tenant key on an admin route', 403, 'forbidden', [
    (w) => w.box.api('POST', '/v1/tenants', { name: 'x' }, w.a.apiKey),
  ]);

  rejects("another tenant's destination", 404, 'not_found', [
    (w) => w.box.api('GET', `/v1/destinations/${w.dB}`, undefined, w.a.apiKey),
    (w) => w.box.api('PATCH', `/v1/destinations/${w.dB}`, { name: 'mine' }, w.a.apiKey),
    (w) => w.box.api('DELETE', `/v1/destinations/${w.dB}`, undefined, w.a.apiKey),
    (w) => w.box.api('POST', `/v1/destinations/${w.dB}/pause`, undefined, w.a.apiKey),
    (w) => w.box.api('POST', '/v1/events', event(w, { destinationId: w.dB }), w.a.apiKey),
  ]);

  const privateUrls = [
    'http://127.0.0.1:8080/hook',
    'http://10.1.2.3/hook',
    'http://192.168.0.1/hook',
    'http://172.16.5.4/hook',
    'http://169.254.169.254/latest/meta-data',
    'http://[::1]/hook',
    'http://[::ffff:127.0.0.1]/hook',
    // The deprecated IPv4-compatible form, which ipaddr.js rates "unicast".
    'http://[::169.254.169.254]/latest/meta-data',
    'http://[::10.0.0.1]/hook',
    'http://[fe80::1]/hook',
    'http://[fc00::1]/hook',
    'http://0.0.0.0/hook',
  ];
  rejects('a literal private address when private networks are not allowed', 400, 'destination_not_allowed', [
    ...privateUrls.map(
      (url): Call =>
        (w) =>
          w.box.api('POST', '/v1/destinations', destination({ url }), w.a.apiKey),
    ),
    (w) => w.box.api('PATCH', `/v1/destinations/${w.dA}`, { url: 'http://10.0.0.1/hook' }, w.a.apiKey),
  ]);
});
