/**
 * An outage is not a bug: with every store method failing as a driver does when its server is
 * down (a refused connection, Postgres shutting down, SQLite's disk full), every /v1 route
 * answers `503 unavailable` with `Retry-After`, counted in `sluice_api_unavailable_total`;
 * `/healthz` stays 200 and `/readyz` answers 503. An unknown error stays a bare 500. A full
 * disk (SQLite's own SQLITE_FULL) makes `/readyz` 503, saying so, until the store can write.
 */

import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { after, before, describe, it } from 'node:test';
import type { Destination } from '@sluice/client';
import type { SqliteStore } from '@sluice/store-sqlite';
import { Gauge } from 'prom-client';
import { RETRY_AFTER_SECONDS } from './errors.ts';
import { ADMIN_TOKEN, assertError, DESTINATION, type TestApi, testApi } from './test-app.ts';

/** Makes every method of `store` reject with `make()`; returns how to undo it. */
function failEvery(store: SqliteStore, make: () => unknown): () => void {
  const names = Object.getOwnPropertyNames(Object.getPrototypeOf(store)).filter(
    (name) =>
      name !== 'constructor' && typeof (store as unknown as Record<string, unknown>)[name] === 'function',
  );
  const own = store as unknown as Record<string, unknown>;
  for (const name of names) own[name] = () => Promise.reject(make());
  return () => {
    for (const name of names) delete own[name];
  };
}

const refused = () =>
  Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
const shuttingDown = () =>
  Object.assign(new Error('terminating connection due to administrator command'), { code: '57P01' });
const diskFull = () =>
  Object.assign(new Error('database or disk is full'), { code: 'ERR_SQLITE_ERROR', errcode: 13 });

describe('a dependency down: 503 unavailable, never 500', () => {
  let api: TestApi;
  let key: string;
  let tenant: string;
  let destination: string;
  let event: string;
  let delivery: string;

  before(async () => {
    api = await testApi();
    ({ id: tenant, key } = await api.tenant());
    const res = await api.inject('POST', '/v1/destinations', { token: key, body: DESTINATION });
    destination = res.json<Destination>().id;
    const accepted = await api.inject('POST', '/v1/events', {
      token: key,
      body: { type: 'order.created', payload: { n: 1 } },
    });
    event = accepted.json<{ id: string }>().id;
    delivery = accepted.json<{ deliveries: { id: string }[] }>().deliveries[0]?.id ?? '';
  });
  after(() => api.close());

  const routes = (): [string, string, unknown?][] => [
    ['GET', '/v1/tenants'],
    ['POST', '/v1/tenants', { name: 'another' }],
    ['GET', `/v1/tenants/${tenant}`],
    ['GET', '/v1/destinations'],
    ['POST', '/v1/destinations', DESTINATION],
    ['GET', '/v1/destinations/stats'],
    ['GET', `/v1/destinations/${destination}`],
    ['PATCH', `/v1/destinations/${destination}`, { rateLimit: { limit: 5, period: 'second' } }],
    ['DELETE', `/v1/destinations/${destination}`],
    ['GET', `/v1/destinations/${destination}/health`],
    ['POST', `/v1/destinations/${destination}/pause`, {}],
    ['POST', `/v1/destinations/${destination}/resume`, {}],
    ['POST', `/v1/destinations/${destination}/rotate-secret`, {}],
    ['POST', `/v1/destinations/${destination}/replay`, { status: 'dead' }],
    ['GET', `/v1/destinations/${destination}/stats`],
    ['POST', '/v1/events', { type: 'order.created', payload: { n: 2 } }],
    ['POST', '/v1/events/batch', { events: [{ type: 'order.created', payload: { n: 3 } }] }],
    ['GET', `/v1/events/${event}`],
    ['GET', '/v1/deliveries'],
    ['GET', `/v1/deliveries/${delivery}`],
    ['POST', `/v1/deliveries/${delivery}/retry`, {}],
    ['GET', '/v1/alerts'],
  ];

  for (const [what, make] of [
    ['a refused connection', refused],
    ['Postgres shutting down', shuttingDown],
    ['SQLite’s disk full', diskFull],
  ] as const) {
    it(`${what}: every /v1 route answers 503 with Retry-After`, async () => {
      const restore = failEvery(api.store, make);
      try {
        for (const [method, url, body] of routes()) {
          const token = url.startsWith('/v1/tenants') ? ADMIN_TOKEN : key;
          const res = await api.inject(method as 'GET', url, { token, body });
          const error = assertError(res, 503, 'unavailable');
          assert.equal(res.headers['retry-after'], String(RETRY_AFTER_SECONDS), `${method} ${url}`);
          assert.deepEqual(error.details, { retryAfterSeconds: RETRY_AFTER_SECONDS });
          assert.doesNotMatch(res.body, /ECONNREFUSED|5432|57P01|disk/);
        }
      } finally {
        restore();
      }
    });
  }

  it('each 503 is counted in sluice_api_unavailable_total', async () => {
    const count = async () => {
      const res = await api.inject('GET', '/metrics');
      return Number(/^sluice_api_unavailable_total (\d+)$/m.exec(res.body)?.[1]);
    };
    const before = await count();
    const restore = failEvery(api.store, refused);
    try {
      for (let i = 0; i < 3; i++)
        assertError(await api.inject('GET', '/v1/alerts', { token: key }), 503, 'unavailable');
    } finally {
      restore();
    }
    assert.equal(await count(), before + 3);
  });

  it('/metrics still answers: a gauge that reads the store is left out, the rest is there', async () => {
    new Gauge({
      name: 'test_backlog_from_store',
      help: 'reads the store',
      registers: [api.registry],
      collect: async () => {
        await api.store.ping();
      },
    });
    const restore = failEvery(api.store, refused);
    try {
      const res = await api.inject('GET', '/metrics');
      assert.equal(res.statusCode, 200, res.body);
      assert.match(res.body, /^sluice_api_unavailable_total \d+$/m);
      assert.doesNotMatch(res.body, /test_backlog_from_store/);
    } finally {
      restore();
    }
    assert.match((await api.inject('GET', '/metrics')).body, /^test_backlog_from_store 0$/m);
  });

  it('/healthz stays 200, /readyz answers 503 while the store cannot, and 200 after', async () => {
    const restore = failEvery(api.store, refused);
    try {
      assert.equal((await api.inject('GET', '/healthz')).statusCode, 200);
      assert.equal((await api.inject('GET', '/readyz')).statusCode, 503);
    } finally {
      restore();
    }
    assert.equal((await api.inject('GET', '/readyz')).statusCode, 200);
    assert.equal((await api.inject('GET', `/v1/events/${event}`, { token: key })).statusCode, 200);
  });

  it('an unknown error stays a 500 internal that shows nothing of it', async () => {
    const restore = failEvery(api.store, () => new TypeError('secret internals'));
    try {
      const res = await api.inject('GET', '/v1/alerts', { token: key });
      assertError(res, 500, 'internal');
      assert.equal(res.headers['retry-after'], undefined);
      assert.doesNotMatch(res.body, /secret internals/);
    } finally {
      restore();
    }
  });
});

/**
 * SQLite's own full disk on the API's store: the file may not grow past the pages it has
 * (`max_page_count`), so a write that needs a page fails with SQLITE_FULL. Returns the undo.
 */
function fillDisk(store: SqliteStore): () => void {
  const pragma = (name: string) => Number(Object.values(store.db.prepare(`PRAGMA ${name}`).get() ?? {})[0]);
  const limit = pragma('max_page_count');
  store.db.exec(`PRAGMA max_page_count = ${pragma('page_count')}`);
  return () => store.db.exec(`PRAGMA max_page_count = ${limit}`);
}

describe('the disk full: ingest 503, and /readyz 503 saying why until the store can write', () => {
  it('a refused write makes /readyz 503 with its reason; room again makes it 200, then ingest 202', async () => {
    const api = await testApi({ maxPayloadBytes: 512 * 1024, maxRequestBytes: 1024 * 1024 });
    try {
      const { key } = await api.tenant();
      await api.inject('POST', '/v1/destinations', { token: key, body: DESTINATION });
      const send = () =>
        api.inject('POST', '/v1/events', {
          token: key,
          body: { type: 'order.created', payload: { blob: 'x'.repeat(256 * 1024) } },
        });
      const readyz = async () => {
        const res = await api.inject('GET', '/readyz');
        return { status: res.statusCode, body: res.json<{ status: string; reason?: string }>() };
      };
      assert.equal((await send()).statusCode, 202);
      const makeRoom = fillDisk(api.store);
      assert.equal((await readyz()).status, 200, 'nothing refused yet');

      assertError(await send(), 503, 'unavailable');
      const full = {
        status: 503,
        body: { status: 'unavailable', reason: 'the store cannot write: its disk is full' },
      };
      assert.deepEqual(await readyz(), full);
      assert.deepEqual(await readyz(), full, 'still: its probe write is refused too');
      assert.equal((await api.inject('GET', '/healthz')).statusCode, 200);
      assert.equal(
        (await api.inject('GET', '/v1/destinations', { token: key })).statusCode,
        200,
        'reads answer',
      );

      makeRoom();
      assert.deepEqual(await readyz(), { status: 200, body: { status: 'ready' } });
      assert.equal((await send()).statusCode, 202);
    } finally {
      await api.close();
    }
  });
});

describe('draining: a request that arrives while the server closes', () => {
  it('is a 503 unavailable with Retry-After in the error format, after the one in flight', async () => {
    const api = await testApi();
    const { key } = await api.tenant();
    await api.app.listen({ port: 0, host: '127.0.0.1' });
    const { port } = api.app.server.address() as { port: number };
    // The first request waits on the store until the server is closing.
    let release: () => void = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    const listAlerts = api.store.listAlerts.bind(api.store);
    api.store.listAlerts = async (...args) => {
      await held;

      return listAlerts(...args);
    };
    const socket = connect(port, '127.0.0.1');
    let answer = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk) => {
      answer += chunk;
    });
    const closed = new Promise<void>((resolve) => socket.on('close', () => resolve()));
    const request = `GET /v1/alerts HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\n\r\n`;
    socket.write(request);
    await new Promise((resolve) => setTimeout(resolve, 100));
    const closing = api.app.close();
    await new Promise((resolve) => setTimeout(resolve, 100));
    // A second request on the same connection, while the first is in flight and the server closes.
    socket.write(request);
    await new Promise((resolve) => setTimeout(resolve, 100));
    release();
    await closing;
    await closed;
    await api.store.close();
    const [first, second] = answer.split(/(?=HTTP\/1\.1 )/);
    assert.match(first ?? '', /^HTTP\/1\.1 200 /);
    assert.match(second ?? '', /^HTTP\/1\.1 503 /);
    assert.match(second ?? '', /\r\nretry-after: 5\r\n/i);
    const body = JSON.parse((second ?? '').split('\r\n\r\n')[1] ?? '');
    assert.deepEqual(body, {
      error: {
        code: 'unavailable',
        message: 'this instance is shutting down; retry',
        details: { retryAfterSeconds: RETRY_AFTER_SECONDS },
      },
    });
  });
});
