/**
 * The error envelope, `{error: {code, message, details}}`, for every kind of failure,
 * through `app.inject`: a `validation_failed` names each problem by path (body fields bare,
 * `query.` and `params.` prefixed) with the schema's machine-readable code; body parsing and
 * size limits map onto the same codes; an unknown route is a `not_found`; an internal error
 * is a 500 that shows no internals.
 */

import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { after, before, describe, it } from 'node:test';
import type { Destination } from '@sluice/client';
import { ERROR_CODES } from './contract.ts';
import { ADMIN_TOKEN, assertError, DESTINATION, type TestApi, testApi } from './test-app.ts';

describe('the error envelope', () => {
  let api: TestApi;
  let key: string;
  let destination: string;

  before(async () => {
    api = await testApi();
    ({ key } = await api.tenant());
    const res = await api.inject('POST', '/v1/destinations', { token: key, body: DESTINATION });
    destination = res.json<Destination>().id;
  });
  after(() => api.close());

  const post = (url: string, body: unknown) => api.inject('POST', url, { token: key, body });

  it('a body field out of range: its path and the schema code', async () => {
    const res = await post('/v1/destinations', { ...DESTINATION, rateLimit: { limit: 0, period: 'second' } });
    const error = assertError(res, 400, 'validation_failed', 'rateLimit.limit');
    const [issue] = error.details as { path: string; code: string }[];
    assert.equal(issue?.code, 'too_small');
    assert.match(error.message, /^rateLimit\.limit: /);
  });

  it('every problem of a body is listed, each by its path', async () => {
    const res = await post('/v1/destinations', { url: 'ftp://example.com', rateLimit: { period: 'day' } });
    const error = assertError(res, 400, 'validation_failed', 'url');
    const paths = (error.details as { path: string }[]).map((i) => i.path).sort();
    assert.deepEqual(paths, ['rateLimit.limit', 'rateLimit.period', 'url']);
  });

  it('an unknown body field is named, never ignored', async () => {
    const res = await post('/v1/destinations', { ...DESTINATION, colour: 'red' });
    const error = assertError(res, 400, 'validation_failed', 'colour');
    assert.deepEqual(error.details, [
      { path: 'colour', message: 'unknown field', code: 'unrecognized_keys' },
    ]);
  });

  it('a cross-field rule: burst below the limit', async () => {
    const rateLimit = { limit: 10, period: 'second', burst: 5 };
    assertError(
      await post('/v1/destinations', { ...DESTINATION, rateLimit }),
      400,
      'validation_failed',
      'rateLimit.burst',
    );
  });

  it('query parameters: out of range, unknown, or a cursor of another list', async () => {
    const get = (url: string) => api.inject('GET', url, { token: key });
    assertError(await get('/v1/destinations?limit=0'), 400, 'validation_failed', 'query.limit');
    assertError(await get('/v1/destinations?limit=501'), 400, 'validation_failed', 'query.limit');
    const unknown = assertError(
      await get('/v1/destinations?colour=red'),
      400,
      'validation_failed',
      'query.colour',
    );
    assert.deepEqual(unknown.details, [
      { path: 'query.colour', message: 'unknown parameter', code: 'unrecognized_keys' },
    ]);
    assertError(await get('/v1/destinations?cursor=bm9wZQ'), 400, 'validation_failed', 'query.cursor');
    assertError(await get(`/v1/destinations/${destination}?foo=1`), 400, 'validation_failed', 'query.foo');
  });

  it('a malformed id in the path: params.id', async () => {
    const res = await api.inject('GET', '/v1/destinations/evt_nope', { token: key });
    assertError(res, 400, 'validation_failed', 'params.id');
  });

  it('a path id of any length, on every route with a path parameter: 400 naming it, after the token', async () => {
    const document = (await api.inject('GET', '/openapi.json')).json<{ paths: Record<string, object> }>();
    const routes = Object.entries(document.paths).flatMap(([path, operations]) =>
      path.includes('{')
        ? Object.keys(operations).map((method) => [method.toUpperCase(), path] as const)
        : [],
    );
    assert.ok(routes.length >= 20, `the routes with a path parameter: ${routes.length}`);
    for (const [method, path] of routes) {
      // Over the router's default limit (100) and every parameter's own (an event type: 200).
      for (const length of [201, 10_000]) {
        for (const name of path.match(/\{(\w+)\}/g)?.map((p) => p.slice(1, -1)) ?? []) {
          const url = path.replace(/\{(\w+)\}/g, (_, param) => (param === name ? 'x'.repeat(length) : 'x'));
          const body = method === 'GET' || method === 'DELETE' ? undefined : {};
          const as = async (token: string) => api.inject(method as 'GET', url, { token, body });
          let res = await as(key);
          if (res.statusCode === 403) res = await as(ADMIN_TOKEN);
          const error = assertError(res, 400, 'validation_failed', `params.${name}`);
          assert.ok(error.message.length < 200, `${method} ${url.slice(0, 60)}: ${error.message}`);
          assertError(await api.inject(method as 'GET', url, { body }), 401, 'unauthorized');
        }
      }
    }
  });

  it("an event type's name over the router's default limit of 100 characters is a name like any other", async () => {
    const name = `order.${'a'.repeat(190)}`;
    const admin = (method: 'POST' | 'GET', url: string, body?: unknown) =>
      api.inject(method, url, { token: ADMIN_TOKEN, body });
    assert.equal((await admin('POST', '/v1/event-types', { name, description: 'long' })).statusCode, 201);
    assert.equal((await admin('GET', `/v1/event-types/${name}`)).json<{ name: string }>().name, name);
  });

  it('a path that is not valid percent-encoding: 400 validation_failed', async () => {
    for (const url of ['/v1/destinations/%zz', '/v1/%E0%A4%A', '/v1/destinations/%zz/pause']) {
      const error = assertError(
        await api.inject('GET', url, { token: key }),
        400,
        'validation_failed',
        'url',
      );
      assert.equal(error.message, "the URL's path is not valid percent-encoding");
    }
  });

  it('an empty patch, on every PATCH route: 400 validation_failed "at least one field", the same on each', async () => {
    const { id: tenant } = await api.tenant();
    const created = await api.inject('POST', '/v1/event-types', {
      token: ADMIN_TOKEN,
      body: { name: 'patch.me', description: 'x' },
    });
    assert.equal(created.statusCode, 201, created.body);
    const urls: Record<string, [string, string]> = {
      '/v1/tenants/{id}': [`/v1/tenants/${tenant}`, ADMIN_TOKEN],
      '/v1/destinations/{id}': [`/v1/destinations/${destination}`, key],
      '/v1/event-types/{name}': ['/v1/event-types/patch.me', ADMIN_TOKEN],
    };
    const document = (await api.inject('GET', '/openapi.json')).json<{ paths: Record<string, object> }>();
    const patched = Object.keys(document.paths).filter((path) => 'patch' in (document.paths[path] ?? {}));
    assert.deepEqual(patched.sort(), Object.keys(urls).sort(), 'every PATCH route is below');
    for (const [url, token] of Object.values(urls)) {
      const error = assertError(
        await api.inject('PATCH', url, { token, body: {} }),
        400,
        'validation_failed',
      );
      assert.deepEqual(error, {
        code: 'validation_failed',
        message: 'body: at least one field',
        details: [{ path: '', message: 'at least one field', code: 'custom' }],
      });
    }
    const quota = await api.inject('PATCH', `/v1/tenants/${tenant}`, {
      token: ADMIN_TOKEN,
      body: { quota: {} },
    });
    assertError(quota, 400, 'validation_failed', 'quota');
  });

  it('a body that is not JSON, not an object, or missing', async () => {
    const raw = (payload: string, contentType = 'application/json') =>
      api.inject('POST', '/v1/destinations', {
        token: key,
        headers: { 'content-type': contentType },
        body: payload,
      });
    assertError(await raw('{"url":'), 400, 'validation_failed', '');
    assertError(await raw(''), 400, 'validation_failed', '');
    assertError(await raw('[1,2]'), 400, 'validation_failed');
    assertError(await raw('url=x', 'text/plain'), 400, 'validation_failed', 'headers.content-type');
  });

  it('a body over the request limit: 413 payload_too_large', async () => {
    const res = await post('/v1/events', { type: 'a.b', payload: 'x'.repeat(70 * 1_024) });
    assertError(res, 413, 'payload_too_large');
  });

  it('a loopback or private URL: destination_not_allowed, naming the URL', async () => {
    for (const url of [
      'http://127.0.0.1:8080/hook',
      'http://10.0.0.7/hook',
      'http://localhost/hook',
      'http://[::1]/',
    ]) {
      const error = assertError(
        await post('/v1/destinations', { ...DESTINATION, url }),
        400,
        'destination_not_allowed',
      );
      assert.deepEqual(error.details, { url });
    }
    const patch = await api.inject('PATCH', `/v1/destinations/${destination}`, {
      token: key,
      body: { url: 'http://192.168.1.1/' },
    });
    assertError(patch, 400, 'destination_not_allowed');
  });

  it('an unknown route, or an unknown method on a route: 404 not_found', async () => {
    const error = assertError(await api.inject('GET', '/v1/nothing?x=1', { token: key }), 404, 'not_found');
    assert.equal(error.message, 'no route GET /v1/nothing');
    assertError(await api.inject('PUT', '/v1/destinations', { token: key, body: {} }), 404, 'not_found');
  });
});

describe('an internal error', () => {
  it('is a 500 `internal` with no internals in the body', async () => {
    const api = await testApi();
    try {
      const { key } = await api.tenant();
      await api.store.close(); // every read now throws inside the store
      const res = await api.inject('GET', '/v1/destinations', { token: key });
      const error = assertError(res, 500, 'internal');
      assert.equal(error.message, 'internal error');
      assert.equal(error.details, null);
      assert.doesNotMatch(res.body, /sqlite|database|stack|at /i);
    } finally {
      await api.close();
    }
  });
});

describe('the error codes', () => {
  it('docs/api.md "Errors" lists every code of ERROR_CODES, and no other', async () => {
    const doc = await readFile(new URL('../../../docs/api.md', import.meta.url), 'utf8');
    const start = doc.indexOf('\n## Errors\n');
    assert.ok(start >= 0, 'docs/api.md has an "Errors" section');
    const end = doc.indexOf('\n## ', start + 1);
    const section = doc.slice(start, end < 0 ? undefined : end);
    const listed = [...section.matchAll(/^\| \d{3} \| `(\w+)` \|/gm)].map((m) => m[1]);
    assert.deepEqual([...new Set(listed)].sort(), [...ERROR_CODES].sort());
  });
});
