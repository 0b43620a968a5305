/**
 * `GET /openapi.json`: a valid OpenAPI 3.x document (checked by
 * `@seriousme/openapi-schema-validator`) that lists exactly the routes the server
 * serves under `/v1` — the route table of the contract test, and every method the server
 * answers on those paths (found by asking it: fastify answers an unregistered method or
 * path with our `no route` 404) — each with the error responses it really gives.
 *
 * `/healthz`, `/readyz`, `/metrics` and `/openapi.json` are registered with `hide: true`:
 * operational endpoints, outside the API's document by design; the test checks they are
 * served and not listed.
 */

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Validator } from '@seriousme/openapi-schema-validator';
import { SluiceError } from '@sluice/client';
import { fileBox, quietDestinationWithDeadDelivery, ROUTES } from './helpers/client.ts';

const get = fileBox();

interface Operation {
  responses?: Record<string, { content?: Record<string, { schema?: { $ref?: string } }> }>;
  parameters?: { in: string; name: string; required?: boolean }[];
  requestBody?: { content?: Record<string, unknown> };
}

type Doc = { openapi: string; paths: Record<string, Record<string, Operation>> };

const METHODS = ['get', 'post', 'put', 'patch', 'delete'] as const;

/** A body each route with one accepts: a probe fails for the one reason it is about. */
const VALID_BODY: Record<string, unknown> = {
  'POST /v1/tenants': { name: 'probe' },
  'PATCH /v1/tenants/{id}': { quota: { pendingEvents: null } },
  'POST /v1/tenants/{id}/keys': {},
  'POST /v1/destinations': { url: 'https://example.test/hook', rateLimit: { limit: 1, period: 'second' } },
  'PATCH /v1/destinations/{id}': { name: 'probe' },
  'POST /v1/destinations/{id}/replay': { status: 'dead' },
  'POST /v1/events': { type: 'probe', payload: {} },
  'POST /v1/events/batch': { events: [{ type: 'probe', payload: {} }] },
  'POST /v1/event-types': { name: 'probe.type', description: 'probe' },
  'PATCH /v1/event-types/{name}': { description: 'probe' },
  'POST /v1/destinations/{id}/test': {},
  'POST /v1/destinations/{id}/preview': { type: 'order.paid', payload: {} },
  'POST /v1/portal-links': {},
};

let doc: Doc;

/** A key id that names nothing: routes with `{keyId}` are probed with it. */
const NO_KEY = `key_${'0'.repeat(26)}`;

function operations(): Map<string, Operation> {
  const out = new Map<string, Operation>();
  for (const [path, item] of Object.entries(doc.paths)) {
    for (const method of METHODS) {
      const op = item[method];
      if (op !== undefined) out.set(`${method.toUpperCase()} ${path}`, op);
    }
  }
  return out;
}

/** The status the server answers, and whether it was its "no route" 404. */
async function probe(
  method: string,
  path: string,
  token: string | undefined,
  init: { body?: unknown; rawBody?: string } = {},
) {
  try {
    await get().client(token).request(method, path, init);
    return { status: 200, noRoute: false };
  } catch (err) {
    if (!(err instanceof SluiceError)) throw err;
    return { status: err.status, noRoute: err.code === 'not_found' && err.message.startsWith('no route') };
  }
}

describe('OpenAPI', () => {
  it('GET /openapi.json is valid OpenAPI 3.x, without a token', async () => {
    doc = (await get().client(undefined).openapi()) as unknown as Doc;
    assert.match(doc.openapi, /^3\.\d+\.\d+$/);
    const result = await new Validator().validate(doc as unknown as Record<string, unknown>);
    assert.equal(result.valid, true, JSON.stringify(result.errors, null, 1));
  });

  it('lists exactly the routes of the API', () => {
    assert.deepEqual([...operations().keys()].sort(), [...ROUTES].sort());
  });

  it('every method the server answers on those paths is listed, and nothing else', {
    timeout: 30_000,
  }, async () => {
    const ids: Record<string, string> = {
      tenants: `ten_${'0'.repeat(26)}`,
      destinations: `dst_${'0'.repeat(26)}`,
      events: `evt_${'0'.repeat(26)}`,
      deliveries: `dlv_${'0'.repeat(26)}`,
      'portal-links': `prt_${'0'.repeat(26)}`,
    };
    const listed = [...operations().keys()].map((route) => {
      const [method, template] = route.split(' ') as [string, string];
      const pattern = template.replace('{id}', '[^/]+').replace('{keyId}', '[^/]+');
      return { route, method, pattern: new RegExp(`^${pattern}$`) };
    });
    const unlisted: string[] = [];
    const missing: string[] = [];
    for (const path of Object.keys(doc.paths)) {
      const concrete = path.replace('{id}', ids[path.split('/')[2]!]!).replace('{keyId}', NO_KEY);
      for (const method of METHODS) {
        const { noRoute } = await probe(method.toUpperCase(), concrete, get().adminToken);
        const documented = listed.some((l) => l.method === method.toUpperCase() && l.pattern.test(concrete));
        if (!noRoute && !documented) unlisted.push(`${method.toUpperCase()} ${concrete}`);
        if (noRoute && documented) missing.push(`${method.toUpperCase()} ${concrete}`);
      }
    }
    assert.deepEqual(unlisted, [], 'served, not in the document');
    assert.deepEqual(missing, [], 'in the document, not served');
  });

  it('the operational endpoints are served and not listed', async () => {
    for (const path of ['/healthz', '/readyz', '/metrics', '/openapi.json']) {
      assert.equal(doc.paths[path], undefined, `${path} is not in the document`);
      const { status } = await probe('GET', path, undefined);
      assert.equal(status, 200, path);
    }
  });

  it('every operation documents its parameters and body', () => {
    for (const [route, op] of operations()) {
      const params = (op.parameters ?? []).filter((p) => p.in === 'path').map((p) => [p.name, p.required]);
      const named = [...route.matchAll(/\{(\w+)\}/g)].map((m) => [m[1], true]);
      assert.deepEqual(params, named, `${route}: path parameters`);
      const hasBody = route in VALID_BODY;
      assert.equal(
        op.requestBody?.content?.['application/json'] !== undefined,
        hasBody,
        `${route}: request body`,
      );
    }
  });

  it('every error status a route answers is documented, with the error body', {
    timeout: 60_000,
  }, async () => {
    const { api, tenant } = await get().tenant('openapi');
    const { dst, evt, dlv } = await quietDestinationWithDeadDelivery(get(), api, 'openapi');
    const key = tenant.apiKey;
    const admin = get().adminToken;
    const huge = JSON.stringify({ name: 'x'.repeat(9 * 1024 * 1024) });
    const ids: Record<string, string> = {
      tenants: tenant.id,
      destinations: dst,
      events: evt,
      deliveries: dlv,
      'portal-links': (await api.portalLinks.create()).id,
    };
    const unknown: Record<string, string> = {
      tenants: `ten_${'0'.repeat(26)}`,
      destinations: `dst_${'0'.repeat(26)}`,
      events: `evt_${'0'.repeat(26)}`,
      deliveries: `dlv_${'0'.repeat(26)}`,
      'portal-links': `prt_${'0'.repeat(26)}`,
    };
    // A delivered delivery, for the 409 of a retry.
    await get().rcv.setDefault(get().rcv.path('openapi'), 200);
    await api.destinations.resume(dst);
    const ok = await api.events.send({ type: 'x', payload: {}, destinationId: dst });
    const done = ok.deliveries[0]!.id;
    await get().rcv.waitFor(
      () => get().rcv.deliveredIds(get().rcv.path('openapi')).has(ok.id),
      15_000,
      'delivered',
    );
    await new Promise((r) => setTimeout(r, 200));

    const problems: string[] = [];
    for (const [route, op] of operations()) {
      const [method, withKey] = route.split(' ') as [string, string];
      const template = withKey.replace('{keyId}', NO_KEY);
      const kind = template.split('/')[2]!;
      const token = kind === 'tenants' ? admin : key;
      const path = template.replace('{id}', ids[kind]!);
      const seen = new Map<number, string>();
      const note = (what: string, r: { status: number }) => {
        if (r.status >= 400) seen.set(r.status, what);
      };
      const hasBody = op.requestBody !== undefined;
      const valid = hasBody ? { body: VALID_BODY[route] } : {};
      const hasQuery = (op.parameters ?? []).some((p) => p.in === 'query');
      note('no token', await probe(method, path, undefined));
      if (hasQuery) note('a bad query', await probe(method, `${path}?bogusParameter=1`, token, valid));
      if (hasBody) note('a bad body', await probe(method, path, token, { body: { bogusField: 1 } }));
      if (hasBody) note('a body over the request limit', await probe(method, path, token, { rawBody: huge }));
      if (template.includes('{id}')) {
        note('a malformed id', await probe(method, template.replace('{id}', 'nope'), token));
        note('an unknown id', await probe(method, template.replace('{id}', unknown[kind]!), token, valid));
      }
      if (kind === 'tenants') note('a tenant key', await probe(method, path, key));
      if (route === 'POST /v1/deliveries/{id}/retry')
        note('a delivered delivery', await probe(method, template.replace('{id}', done), key));
      if (route === 'POST /v1/events') {
        note(
          'a payload over 256 KiB',
          await probe(method, path, key, {
            body: { type: 'x', payload: 'x'.repeat(300_000), destinationId: dst },
          }),
        );
      }
      const documented = Object.keys(op.responses ?? {});
      for (const [status, what] of seen) {
        if (!documented.includes(String(status)))
          problems.push(`${route} answers ${status} (${what}), not documented`);
      }
      for (const status of documented.filter((s) => Number(s) >= 400)) {
        const schema = op.responses?.[status]?.content?.['application/json']?.schema;
        if (schema?.$ref !== '#/components/schemas/Error')
          problems.push(`${route} ${status}: not the error body`);
      }
      if (!documented.includes('500')) problems.push(`${route}: no 500`);
    }
    assert.deepEqual(problems, []);
  });
});
