/**
 * The client without a server: a fake `fetch` records every request and answers from a
 * script. What is checked is what goes on the wire (URL, method, headers, body) and what
 * the caller gets back (the parsed answer, or a `SluiceError` with the right fields).
 */

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Sluice, type SluiceOptions } from './client.ts';
import { isSluiceError, SluiceError } from './errors.ts';
import type { FetchLike, FetchResponse } from './http.ts';

/** One request as the fake `fetch` saw it. */
interface Sent {
  url: string;
  method: string;
  headers: Record<string, string>;
  body: string | undefined;
  signal: AbortSignal;
}

type Answer = { status: number; body?: string; json?: unknown };

function response({ status, body, json }: Answer): FetchResponse {
  const text = json === undefined ? (body ?? '') : JSON.stringify(json);
  return { status, headers: { get: () => null }, text: async () => text };
}

/** More requests than any test sends: a walk that does not stop fails instead of spinning. */
const RUNAWAY = 50;

/** A `fetch` that records each request and answers with `answer(request)` (default: 200 `{}`). */
function fakeFetch(answer: (req: Sent) => Answer | Promise<Answer> = () => ({ status: 200, json: {} })) {
  const sent: Sent[] = [];
  const fetch: FetchLike = async (url, init) => {
    if (sent.length >= RUNAWAY) throw new Error(`more than ${RUNAWAY} requests: a runaway walk`);
    const req = {
      url,
      method: init.method,
      headers: { ...init.headers },
      body: init.body,
      signal: init.signal,
    };
    sent.push(req);
    return response(await answer(req));
  };
  return { fetch, sent };
}

/** A `fetch` that never answers: it rejects only when the request's signal aborts. */
const hangingFetch: FetchLike = (_url, init) =>
  new Promise((_resolve, reject) => {
    if (init.signal.aborted) reject(init.signal.reason);
    init.signal.addEventListener('abort', () => reject(init.signal.reason), { once: true });
  });

const client = (fetch: FetchLike, options: Partial<SluiceOptions> = {}) =>
  new Sluice({ baseUrl: 'http://api.test', token: 'sk_tenant', fetch, ...options });

/** Awaits `promise`, which must reject with a `SluiceError`; returns it. */
async function failure(promise: Promise<unknown>): Promise<SluiceError> {
  try {
    await promise;
  } catch (err) {
    assert.ok(err instanceof SluiceError, `not a SluiceError: ${String(err)}`);
    return err;
  }
  assert.fail('expected a SluiceError, got success');
}

const last = (sent: Sent[]): Sent => {
  const req = sent.at(-1);
  assert.ok(req, 'no request was sent');
  return req;
};

describe('URLs', () => {
  it('keeps the base path, with or without a trailing slash', async () => {
    for (const baseUrl of ['http://api.test/sluice', 'http://api.test/sluice/']) {
      const { fetch, sent } = fakeFetch();
      await client(fetch, { baseUrl }).tenants.get('ten_1');
      assert.equal(last(sent).url, 'http://api.test/sluice/v1/tenants/ten_1', baseUrl);
    }
  });

  it('builds the query from the parameters given, leaving out the ones not given', async () => {
    const { fetch, sent } = fakeFetch(() => ({ status: 200, json: { data: [], nextCursor: null } }));
    const api = client(fetch);
    await api.deliveries.list({ destinationId: 'dst_1', status: 'dead', limit: 10, cursor: 'c/+=' });
    const url = new URL(last(sent).url);
    assert.equal(url.pathname, '/v1/deliveries');
    assert.deepEqual(Object.fromEntries(url.searchParams), {
      limit: '10',
      cursor: 'c/+=',
      destinationId: 'dst_1',
      status: 'dead',
    });
    assert.match(last(sent).url, /cursor=c%2F%2B%3D/, 'query values are encoded');
    await api.deliveries.list();
    assert.equal(last(sent).url, 'http://api.test/v1/deliveries', 'no parameter, no query');
    await api.destinations.stats('dst_1', { seconds: 60 });
    assert.equal(last(sent).url, 'http://api.test/v1/destinations/dst_1/stats?seconds=60');
  });

  it('encodes an id in the path, so that an id never changes the route', async () => {
    const { fetch, sent } = fakeFetch();
    await client(fetch).deliveries.retry('../tenants?x=1');
    assert.equal(last(sent).url, 'http://api.test/v1/deliveries/..%2Ftenants%3Fx%3D1/retry');
  });

  it('sends each method to its route', async () => {
    const { fetch, sent } = fakeFetch(() => ({ status: 200, json: { data: [], nextCursor: null } }));
    const api = client(fetch);
    await api.destinations.get('dst_1');
    await api.destinations.update('dst_1', { name: 'x' });
    await api.destinations.delete('dst_1');
    await api.destinations.pause('dst_1');
    await api.destinations.resume('dst_1');
    await api.destinations.rotateSecret('dst_1');
    await api.destinations.replay('dst_1');
    await api.events.get('evt_1');
    await api.deliveries.get('dlv_1');
    await api.tenants.list();
    await api.openapi();
    assert.deepEqual(
      sent.map((r) => `${r.method} ${r.url.slice('http://api.test'.length)}`),
      [
        'GET /v1/destinations/dst_1',
        'PATCH /v1/destinations/dst_1',
        'DELETE /v1/destinations/dst_1',
        'POST /v1/destinations/dst_1/pause',
        'POST /v1/destinations/dst_1/resume',
        'POST /v1/destinations/dst_1/rotate-secret',
        'POST /v1/destinations/dst_1/replay',
        'GET /v1/events/evt_1',
        'GET /v1/deliveries/dlv_1',
        'GET /v1/tenants',
        'GET /openapi.json',
      ],
    );
  });
});

describe('headers and bodies', () => {
  it('sends the token as a bearer, the client headers, and accepts JSON', async () => {
    const { fetch, sent } = fakeFetch();
    await client(fetch, { headers: { 'x-trace': 't-1' } }).destinations.get('dst_1');
    assert.deepEqual(last(sent).headers, {
      accept: 'application/json',
      authorization: 'Bearer sk_tenant',
      'x-trace': 't-1',
    });
  });

  it('sends no authorization header without a token; withToken swaps it', async () => {
    const { fetch, sent } = fakeFetch();
    const anonymous = new Sluice({ baseUrl: 'http://api.test', fetch });
    await anonymous.openapi();
    assert.equal(last(sent).headers.authorization, undefined);
    await anonymous.withToken('sa_admin').tenants.list();
    assert.equal(last(sent).headers.authorization, 'Bearer sa_admin');
  });

  it('sends a JSON body with its content type; a GET has neither', async () => {
    const { fetch, sent } = fakeFetch(() => ({ status: 201, json: { id: 'dst_1' } }));
    const input = { url: 'https://example.test/hook', rateLimit: { limit: 20, period: 'second' as const } };
    const created = await client(fetch).destinations.create(input);
    assert.deepEqual(created, { id: 'dst_1' }, 'the parsed answer');
    const req = last(sent);
    assert.equal(req.method, 'POST');
    assert.equal(req.headers['content-type'], 'application/json');
    assert.deepEqual(JSON.parse(req.body ?? ''), input);
    await client(fetch).destinations.list();
    assert.equal(last(sent).body, undefined);
    assert.equal(last(sent).headers['content-type'], undefined);
  });

  it('wraps a batch in { events }, and a replay defaults to status dead', async () => {
    const { fetch, sent } = fakeFetch();
    const api = client(fetch);
    const events = [
      { type: 'a.b', payload: 1 },
      { type: 'a.c', payload: null },
    ];
    await api.events.sendBatch(events);
    assert.deepEqual(JSON.parse(last(sent).body ?? ''), { events });
    await api.destinations.replay('dst_1', { since: '2024-01-01T00:00:00.000Z' });
    assert.deepEqual(JSON.parse(last(sent).body ?? ''), {
      since: '2024-01-01T00:00:00.000Z',
      status: 'dead',
    });
  });

  it('request(): raw bodies and headers that override the client’s', async () => {
    const { fetch, sent } = fakeFetch();
    await client(fetch).request('POST', '/v1/events', {
      rawBody: '{"type":',
      headers: { 'content-type': 'text/plain', authorization: 'Basic x' },
    });
    assert.equal(last(sent).body, '{"type":');
    assert.equal(last(sent).headers['content-type'], 'text/plain');
    assert.equal(last(sent).headers.authorization, 'Basic x');
  });

  it('an empty 2xx answer (204) resolves with undefined', async () => {
    const { fetch } = fakeFetch(() => ({ status: 204 }));
    assert.equal(await client(fetch).destinations.delete('dst_1'), undefined);
  });
});

describe('errors', () => {
  it("maps the API's error body onto status, code, message, details and issues", async () => {
    const details = [
      { path: 'rateLimit.limit', message: 'too small', code: 'too_small' },
      { path: 'query.tenantId', message: 'required with the admin token' },
      'not an issue',
    ];
    const { fetch } = fakeFetch(() => ({
      status: 400,
      json: { error: { code: 'validation_failed', message: 'rateLimit.limit: too small', details } },
    }));
    const err = await failure(
      client(fetch).destinations.create({ url: 'x', rateLimit: { limit: 0, period: 'second' } }),
    );
    assert.equal(err.name, 'SluiceError');
    assert.equal(err.status, 400);
    assert.equal(err.code, 'validation_failed');
    assert.equal(err.message, 'rateLimit.limit: too small');
    assert.deepEqual(err.details, details);
    assert.deepEqual(err.issues, details.slice(0, 2), 'the entries with a path');
    assert.equal(err.method, 'POST');
    assert.equal(err.url, 'http://api.test/v1/destinations');
    assert.ok(isSluiceError(err, 'validation_failed'));
    assert.ok(!isSluiceError(err, 'not_found'));
    assert.ok(!isSluiceError(new Error('x')));
  });

  it('another code: issues is empty, details as sent (null when absent)', async () => {
    let details: unknown = { status: 'delivered' };
    const { fetch } = fakeFetch(() => ({
      status: 409,
      json: { error: { code: 'conflict', message: 'a delivered delivery cannot be retried', details } },
    }));
    const conflict = await failure(client(fetch).deliveries.retry('dlv_1'));
    assert.equal(conflict.status, 409);
    assert.equal(conflict.code, 'conflict');
    assert.deepEqual(conflict.details, { status: 'delivered' });
    assert.deepEqual(conflict.issues, []);
    details = [{ path: 'id', message: 'looks like an issue' }];
    assert.deepEqual((await failure(client(fetch).deliveries.retry('dlv_1'))).issues, [], 'only validation');
    details = undefined;
    assert.equal((await failure(client(fetch).deliveries.retry('dlv_1'))).details, null);
  });

  it('an error answer that is not the API’s body → unexpected_response, with an excerpt', async () => {
    for (const body of ['<html>502 Bad Gateway</html>', '{"message":"no"}', '']) {
      const { fetch } = fakeFetch(() => ({ status: 502, body }));
      const err = await failure(client(fetch).destinations.get('dst_1'));
      assert.equal(err.status, 502, body);
      assert.equal(err.code, 'unexpected_response', body);
      assert.deepEqual(err.details, { body }, body);
    }
  });

  it('a 2xx answer that is not JSON → unexpected_response', async () => {
    const { fetch } = fakeFetch(() => ({ status: 200, body: 'OK' }));
    const err = await failure(client(fetch).tenants.list());
    assert.equal(err.status, 200);
    assert.equal(err.code, 'unexpected_response');
  });

  it('no connection → network_error, status 0, with the cause', async () => {
    const cause = new TypeError('fetch failed');
    const fetch: FetchLike = async () => {
      throw cause;
    };
    const err = await failure(client(fetch).events.send({ type: 'a.b', payload: {} }));
    assert.equal(err.status, 0);
    assert.equal(err.code, 'network_error');
    assert.equal(err.cause, cause);
    assert.match(err.message, /^POST http:\/\/api\.test\/v1\/events: fetch failed$/);
  });

  it('no answer within the timeout → timeout; a call may set its own', async () => {
    const started = Date.now();
    const err = await failure(client(hangingFetch, { timeout: 30 }).destinations.get('dst_1'));
    assert.equal(err.status, 0);
    assert.equal(err.code, 'timeout');
    assert.ok(Date.now() - started < 5_000, 'the client timeout applies');
    const own = await failure(client(hangingFetch).destinations.get('dst_1', { timeout: 30 }));
    assert.equal(own.code, 'timeout', 'the per-call timeout overrides the 30 s default');
  });

  it('an answered call leaves no timer armed for its timeout', async () => {
    const { fetch } = fakeFetch(async () => ({ status: 200, json: { ok: true } }));
    const timers = () => process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;
    const before = timers();
    for (let i = 0; i < 20; i++) await client(fetch, { timeout: 60_000 }).request('GET', '/x');
    assert.ok(timers() <= before, `no timeout left armed (${before} timers before, ${timers()} after)`);
  });

  it('timeout 0: no timer, the request waits for its answer', async () => {
    const { fetch, sent } = fakeFetch(async () => {
      await new Promise((resolve) => setTimeout(resolve, 50));
      return { status: 200, json: { ok: true } };
    });
    assert.deepEqual(await client(fetch, { timeout: 1 }).request('GET', '/x', { timeout: 0 }), { ok: true });
    assert.equal(last(sent).signal.aborted, false);
  });

  it("the caller's signal → aborted, before or during the request", async () => {
    const controller = new AbortController();
    const pending = client(hangingFetch).destinations.get('dst_1', { signal: controller.signal });
    controller.abort();
    const during = await failure(pending);
    assert.equal(during.status, 0);
    assert.equal(during.code, 'aborted');
    const before = await failure(
      client(hangingFetch).deliveries.list({}, { signal: AbortSignal.abort(), timeout: 10_000 }),
    );
    assert.equal(before.code, 'aborted');
  });
});

describe('pagination', () => {
  /** Pages of the items 1–5, two at a time, keyed by cursor. */
  const PAGES: Record<string, { data: number[]; nextCursor: string | null }> = {
    start: { data: [1, 2], nextCursor: 'c1' },
    c1: { data: [3, 4], nextCursor: 'c2' },
    c2: { data: [5], nextCursor: null },
  };
  const paged = () =>
    fakeFetch((req) => ({
      status: 200,
      json: PAGES[new URL(req.url).searchParams.get('cursor') ?? 'start'],
    }));
  const cursors = (sent: Sent[]) => sent.map((r) => new URL(r.url).searchParams.get('cursor'));

  it('listAll walks the cursors until nextCursor is null, keeping the parameters', async () => {
    const { fetch, sent } = paged();
    const items: unknown[] = [];
    for await (const d of client(fetch).deliveries.listAll({ status: 'dead', limit: 2 })) items.push(d);
    assert.deepEqual(items, [1, 2, 3, 4, 5]);
    assert.deepEqual(cursors(sent), [null, 'c1', 'c2']);
    for (const r of sent) {
      assert.equal(new URL(r.url).searchParams.get('status'), 'dead');
      assert.equal(new URL(r.url).searchParams.get('limit'), '2');
    }
  });

  it('pages yields each page, from a given cursor', async () => {
    const { fetch, sent } = paged();
    const pages: unknown[] = [];
    for await (const page of client(fetch).tenants.pages({ cursor: 'c1' })) pages.push(page);
    assert.deepEqual(pages, [PAGES.c1, PAGES.c2]);
    assert.deepEqual(cursors(sent), ['c1', 'c2']);
  });

  it('fetches lazily: stopping early sends no more requests', async () => {
    const { fetch, sent } = paged();
    for await (const d of client(fetch).destinations.listAll()) if (d === (2 as unknown)) break;
    assert.equal(sent.length, 1);
  });

  it('an empty page ends the walk even with a cursor', async () => {
    const { fetch, sent } = fakeFetch(() => ({ status: 200, json: { data: [], nextCursor: 'again' } }));
    const items: unknown[] = [];
    for await (const d of client(fetch).destinations.listAll()) items.push(d);
    assert.deepEqual(items, []);
    assert.equal(sent.length, 1);
  });

  it('an error on a later page rejects the walk', async () => {
    const { fetch } = fakeFetch((req) =>
      new URL(req.url).searchParams.get('cursor') === 'c1'
        ? {
            status: 400,
            json: { error: { code: 'validation_failed', message: 'query.cursor', details: [] } },
          }
        : { status: 200, json: PAGES.start },
    );
    const seen: unknown[] = [];
    const err = await failure(
      (async () => {
        for await (const d of client(fetch).deliveries.listAll()) seen.push(d);
      })(),
    );
    assert.equal(err.code, 'validation_failed');
    assert.deepEqual(seen, [1, 2]);
  });
});

describe('acting for a tenant (admin token)', () => {
  const tenantOf = (r: Sent) => new URL(r.url).searchParams.get('tenantId');

  it('forTenant adds ?tenantId= to the tenant-scoped calls, and leaves the original alone', async () => {
    const { fetch, sent } = fakeFetch(() => ({ status: 200, json: { data: [], nextCursor: null } }));
    const admin = client(fetch, { token: 'sa_admin' });
    const acme = admin.forTenant('ten_acme');
    assert.equal(acme.tenantId, 'ten_acme');
    assert.equal(admin.tenantId, undefined);
    await acme.destinations.create({ url: 'https://example.test', rateLimit: { limit: 1, period: 'hour' } });
    await acme.destinations.list({ limit: 5 });
    await acme.destinations.stats('dst_1');
    await acme.events.send({ type: 'a.b', payload: {} });
    await acme.events.sendBatch([{ type: 'a.b', payload: {} }]);
    await acme.deliveries.list();
    assert.deepEqual(sent.map(tenantOf), Array(6).fill('ten_acme'));
    assert.ok(
      sent.every((r) => r.headers.authorization === 'Bearer sa_admin'),
      'the same token',
    );
    assert.equal(new URL(sent[1]!.url).searchParams.get('limit'), '5');

    await admin.destinations.list();
    assert.equal(tenantOf(last(sent)), null, 'the admin client itself acts for no tenant');
  });

  it('a call’s own tenantId overrides the client’s', async () => {
    const { fetch, sent } = fakeFetch(() => ({ status: 200, json: { data: [], nextCursor: null } }));
    const acme = client(fetch, { token: 'sa_admin', tenantId: 'ten_acme' });
    await acme.deliveries.list({}, { tenantId: 'ten_other' });
    assert.equal(tenantOf(last(sent)), 'ten_other');
    await acme.events.send({ type: 'a.b', payload: {} }, { tenantId: 'ten_other' });
    assert.equal(tenantOf(last(sent)), 'ten_other');
  });
});

describe('construction', () => {
  it('needs a baseUrl', () => {
    assert.throws(() => new Sluice({ baseUrl: '' }), TypeError);
  });
});

describe("tenants' keys and the event log", () => {
  it('each method to its route; listKeys answers the keys; createKey sends no body', async () => {
    const keys = [{ id: 'key_1', prefix: 'sk_abcdefgh', createdAt: 't', lastUsedAt: null }];
    const { fetch, sent } = fakeFetch((req) =>
      req.method === 'DELETE' ? { status: 204 } : { status: 200, json: { data: keys, nextCursor: null } },
    );
    const api = client(fetch, { token: 'sa_admin' });
    await api.tenants.createKey('ten_1');
    assert.deepEqual(await api.tenants.listKeys('ten_1'), keys);
    assert.equal(await api.tenants.deleteKey('ten_1', 'key_1'), undefined);
    assert.equal(await api.tenants.delete('ten_1'), undefined);
    await api.events.list({ type: 'order.*', destinationId: 'dst_1', since: 'a', until: 'b', limit: 5 });
    assert.deepEqual(
      sent.map((r) => `${r.method} ${r.url.slice('http://api.test'.length)}`),
      [
        'POST /v1/tenants/ten_1/keys',
        'GET /v1/tenants/ten_1/keys',
        'DELETE /v1/tenants/ten_1/keys/key_1',
        'DELETE /v1/tenants/ten_1',
        'GET /v1/events?limit=5&type=order.*&destinationId=dst_1&since=a&until=b',
      ],
    );
    assert.equal(sent[0]?.body, undefined);
  });

  it('events.listAll walks the log, and forTenant names the tenant', async () => {
    const { fetch, sent } = fakeFetch((req) =>
      new URL(req.url).searchParams.get('cursor') === null
        ? { status: 200, json: { data: [1, 2], nextCursor: 'c1' } }
        : { status: 200, json: { data: [3], nextCursor: null } },
    );
    const items: unknown[] = [];
    for await (const e of client(fetch, { token: 'sa_admin' })
      .forTenant('ten_1')
      .events.listAll({ type: 'a.b' }))
      items.push(e);
    assert.deepEqual(items, [1, 2, 3]);
    for (const r of sent) {
      assert.equal(new URL(r.url).searchParams.get('tenantId'), 'ten_1');
      assert.equal(new URL(r.url).searchParams.get('type'), 'a.b');
    }
  });

  it('deleting the last key: a conflict error', async () => {
    const body = { error: { code: 'conflict', message: 'a tenant keeps at least one key', details: null } };
    const { fetch } = fakeFetch(() => ({ status: 409, json: body }));
    const err = await failure(client(fetch).tenants.deleteKey('ten_1', 'key_1'));
    assert.equal(err.status, 409);
    assert.equal(err.code, 'conflict');
  });
});
