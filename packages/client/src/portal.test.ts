/**
 * The portal's methods without a server (`whoami`, `portalLinks`, `destinations.test`): a
 * fake `fetch` records each request. What is checked is what goes on the wire (method, URL,
 * body) and what the caller gets back.
 */

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Sluice } from './client.ts';
import type { FetchLike } from './http.ts';

interface Sent {
  url: string;
  method: string;
  body: string | undefined;
}

function fakeFetch(answer: (req: Sent) => { status: number; json?: unknown }) {
  const sent: Sent[] = [];
  const fetch: FetchLike = async (url, init) => {
    if (sent.length > 20) throw new Error('a runaway walk');
    const req = { url, method: init.method, body: init.body };
    sent.push(req);
    const { status, json } = answer(req);
    const text = json === undefined ? '' : JSON.stringify(json);
    return { status, headers: { get: () => null }, text: async () => text };
  };
  return { fetch, sent };
}

const TENANT = 'ten_01jd6x9m0a8d2q5r7t9v1w3y5z';
const LINK = {
  id: 'prt_01jd6x9n4b6c8e0g2h4j6k8m0p',
  tenantId: TENANT,
  access: 'read',
  destinationIds: null,
  branding: { title: 'Acme' },
  createdAt: '2026-01-15T10:30:00.000Z',
  expiresAt: '2026-01-15T10:45:00.000Z',
  expired: false,
};

describe('whoami', () => {
  it('GET /v1/whoami, the answer as it is', async () => {
    const who = { role: 'tenant', tenant: { id: TENANT, name: 'acme' }, portal: null };
    const { fetch, sent } = fakeFetch(() => ({ status: 200, json: who }));
    const sluice = new Sluice({ baseUrl: 'http://api.test', token: 'sk_key', fetch });
    assert.deepEqual(await sluice.whoami(), who);
    assert.deepEqual(
      sent.map((s) => `${s.method} ${s.url}`),
      ['GET http://api.test/v1/whoami'],
    );
  });
});

describe('portalLinks', () => {
  it('create, list, revoke: each to its route; the admin client names the tenant in the body and the query', async () => {
    const created = {
      id: LINK.id,
      url: 'http://api.test/portal/#token=t',
      token: 't',
      expiresAt: LINK.expiresAt,
    };
    const { fetch, sent } = fakeFetch((req) => ({
      status: req.method === 'DELETE' ? 204 : req.method === 'POST' ? 201 : 200,
      json:
        req.method === 'DELETE'
          ? undefined
          : req.method === 'POST'
            ? created
            : { data: [LINK], nextCursor: null },
    }));
    const admin = new Sluice({ baseUrl: 'http://api.test', token: 'sa_admin', fetch }).forTenant(TENANT);
    assert.deepEqual(
      await admin.portalLinks.create({ access: 'read', branding: { title: 'Acme' } }),
      created,
    );
    assert.deepEqual(await admin.portalLinks.list({ limit: 5 }), { data: [LINK], nextCursor: null });
    assert.deepEqual(await admin.portalLinks.revoke(LINK.id), undefined);
    assert.deepEqual(
      sent.map((s) => [s.method, s.url, s.body === undefined ? undefined : JSON.parse(s.body)]),
      [
        [
          'POST',
          'http://api.test/v1/portal-links',
          { access: 'read', branding: { title: 'Acme' }, tenantId: TENANT },
        ],
        ['GET', `http://api.test/v1/portal-links?limit=5&tenantId=${TENANT}`, undefined],
        ['DELETE', `http://api.test/v1/portal-links/${LINK.id}`, undefined],
      ],
    );
  });

  it('a tenant key sends no tenantId; listAll walks every page', async () => {
    let n = 0;
    const { fetch, sent } = fakeFetch(() => {
      n++;
      return {
        status: 200,
        json: { data: [{ ...LINK, id: `${LINK.id}${n}` }], nextCursor: n < 3 ? `c${n}` : null },
      };
    });
    const sluice = new Sluice({ baseUrl: 'http://api.test', token: 'sk_key', fetch });
    const ids = [];
    for await (const link of sluice.portalLinks.listAll({ limit: 1 })) ids.push(link.id);
    assert.equal(ids.length, 3);
    assert.deepEqual(
      sent.map((s) => s.url),
      [
        'http://api.test/v1/portal-links?limit=1',
        'http://api.test/v1/portal-links?limit=1&cursor=c1',
        'http://api.test/v1/portal-links?limit=1&cursor=c2',
      ],
    );
  });
});

describe('destinations.test', () => {
  it('POST /v1/destinations/:id/test with the input as the body ({} when none)', async () => {
    const accepted = { id: 'evt_01jd6xa1b3d5f7h9k1m3n5q7s9', deliveries: [] };
    const { fetch, sent } = fakeFetch(() => ({ status: 202, json: accepted }));
    const sluice = new Sluice({ baseUrl: 'http://api.test', token: 'sk_key', fetch });
    assert.deepEqual(await sluice.destinations.test('dst_1'), accepted);
    assert.deepEqual(
      await sluice.destinations.test('dst_1', { type: 'order.paid', payload: { amount: 5 } }),
      accepted,
    );
    assert.deepEqual(
      sent.map((s) => [s.method, s.url, JSON.parse(s.body ?? 'null')]),
      [
        ['POST', 'http://api.test/v1/destinations/dst_1/test', {}],
        [
          'POST',
          'http://api.test/v1/destinations/dst_1/test',
          { type: 'order.paid', payload: { amount: 5 } },
        ],
      ],
    );
  });
});
