/**
 * The client over real `fetch` implementations and a real HTTP server on 127.0.0.1:0 (not
 * Sluice: a stand-in that answers like it), where client.test.ts uses a fake `fetch`. What is
 * checked is what a user passing `fetch` relies on: undici's `fetch` with a keep-alive pool
 * (`Agent`) carries every call over the pool's connections, and so does a `FetchLike` that is
 * not a fetch at all (undici's `request`, the README's lean recipe: the bench posts tens of
 * thousands of events this way), the client's timeout reaches the request through the
 * signal it passes, and without `fetch` the global one is used.
 *
 * In its own file: client.test.ts is already past the size a file should keep.
 */

import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { Agent, type Dispatcher, request, fetch as undiciFetch } from 'undici';
import { Sluice } from './client.ts';
import { SluiceError } from './errors.ts';
import type { FetchLike } from './http.ts';

interface Seen {
  method: string;
  url: string;
  authorization: string | undefined;
  body: string;
}

/** Answers like the API: 202 to an event, 400 to a bad one, never to `/hang`. */
function answer(req: IncomingMessage, body: string, res: ServerResponse): void {
  const json = (status: number, value: unknown) => {
    res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(value));
  };
  if (req.url === '/hang') return; // answers only when the client gives up
  if (req.method === 'POST' && req.url === '/v1/events') {
    const event = JSON.parse(body) as { type?: unknown };
    if (typeof event.type !== 'string') {
      json(400, {
        error: {
          code: 'validation_failed',
          message: 'invalid request',
          details: [{ path: 'type', message: 'Required' }],
        },
      });
      return;
    }
    json(202, { id: `evt_${event.type}`, deliveries: [] });
    return;
  }
  json(200, { data: [], nextCursor: null });
}

let server: Server;
let baseUrl: string;
const seen: Seen[] = [];
let connections = 0;

before(async () => {
  server = createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => {
      body += chunk;
    });
    req.on('end', () => {
      seen.push({
        method: req.method ?? '',
        url: req.url ?? '',
        authorization: req.headers.authorization,
        body,
      });
      answer(req, body, res);
    });
  });
  server.on('connection', () => connections++);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

after(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

describe('a custom fetch', () => {
  it("undici's fetch over a keep-alive pool: every call on the pool's connections", async () => {
    const agent = new Agent({ connections: 2, keepAliveTimeout: 10_000 });
    let calls = 0;
    const fetch: FetchLike = (url, init) => {
      calls++;
      return undiciFetch(url, { ...init, dispatcher: agent });
    };
    const sluice = new Sluice({ baseUrl, token: 'sk_pool', fetch });
    seen.length = 0;
    connections = 0;
    try {
      for (let i = 0; i < 20; i++) {
        assert.deepEqual(await sluice.events.send({ type: `a.${i}`, payload: { i } }), {
          id: `evt_a.${i}`,
          deliveries: [],
        });
      }
      const batch = Array.from({ length: 40 }, (_, i) => sluice.events.send({ type: `b.${i}`, payload: {} }));
      assert.equal((await Promise.all(batch)).length, 40);
      assert.deepEqual(await sluice.destinations.list(), { data: [], nextCursor: null });

      assert.equal(calls, 61, 'every call went through the given fetch');
      assert.equal(seen.length, 61);
      assert.ok(
        seen.every((s) => s.authorization === 'Bearer sk_pool'),
        'the token on every request',
      );
      assert.deepEqual(JSON.parse(seen[3]?.body ?? ''), { type: 'a.3', payload: { i: 3 } });
      assert.ok(connections <= 2, `61 requests over the pool's 2 connections, not ${connections}`);
    } finally {
      await agent.close();
    }
  });

  it("a FetchLike over undici's request (the README's lean recipe): answers, errors, the pool", async () => {
    const agent = new Agent({ connections: 1, keepAliveTimeout: 10_000 });
    const lean: FetchLike = async (url, init) => {
      const res = await request(url, {
        method: init.method as Dispatcher.HttpMethod,
        headers: init.headers,
        body: init.body,
        signal: init.signal,
        dispatcher: agent,
      });
      const get = (name: string) => {
        const value = res.headers[name.toLowerCase()];
        return value === undefined ? null : Array.isArray(value) ? value.join(', ') : value;
      };
      return { status: res.statusCode, headers: { get }, text: () => res.body.text() };
    };
    // The answers get the whole default timeout (30 requests queue on one connection of a busy
    // machine); only the call to `/hang` is given up on, after 100 ms.
    const sluice = new Sluice({ baseUrl, token: 'sk_lean', fetch: lean });
    seen.length = 0;
    connections = 0;
    try {
      const sent = await Promise.all(
        Array.from({ length: 30 }, (_, i) => sluice.events.send({ type: `l.${i}`, payload: {} })),
      );
      assert.deepEqual(sent[29], { id: 'evt_l.29', deliveries: [] });
      await assert.rejects(
        sluice.request('POST', '/v1/events', { body: { payload: {} } }),
        (err: unknown) =>
          err instanceof SluiceError && err.code === 'validation_failed' && err.status === 400,
      );
      await assert.rejects(
        sluice.request('GET', '/hang', { timeout: 100 }),
        (err: unknown) => err instanceof SluiceError && err.code === 'timeout',
      );
      assert.deepEqual(await sluice.tenants.list(), { data: [], nextCursor: null });
      assert.equal(seen.filter((x) => x.authorization === 'Bearer sk_lean').length, 33);
      assert.ok(connections <= 2, `one pooled connection (and one after the abort), not ${connections}`);
    } finally {
      await agent.close();
    }
  });

  it('an error answer through it is a SluiceError with the issues', async () => {
    const agent = new Agent({ connections: 1 });
    const sluice = new Sluice({
      baseUrl,
      token: 'sk_pool',
      fetch: (url, init) => undiciFetch(url, { ...init, dispatcher: agent }),
    });
    try {
      await assert.rejects(
        sluice.request('POST', '/v1/events', { body: { payload: {} } }),
        (err: unknown) =>
          err instanceof SluiceError &&
          err.status === 400 &&
          err.code === 'validation_failed' &&
          err.issues[0]?.path === 'type',
      );
    } finally {
      await agent.close();
    }
  });

  it("the client's timeout aborts the request through the signal it passes", async () => {
    const agent = new Agent({ connections: 1 });
    const sluice = new Sluice({
      baseUrl,
      fetch: (url, init) => undiciFetch(url, { ...init, dispatcher: agent }),
      timeout: 100,
    });
    const started = Date.now();
    try {
      await assert.rejects(
        sluice.request('GET', '/hang'),
        (err: unknown) => err instanceof SluiceError && err.code === 'timeout' && err.status === 0,
      );
      assert.ok(Date.now() - started < 5_000, 'rejected at the timeout, not when the server answers');
      // The aborted request freed the pool's only connection: the next call goes through.
      assert.deepEqual(await sluice.tenants.list(), { data: [], nextCursor: null });
    } finally {
      await agent.close();
    }
  });

  it('without one, the global fetch', async () => {
    seen.length = 0;
    const sluice = new Sluice({ baseUrl, token: 'sk_global' });
    assert.deepEqual(await sluice.events.send({ type: 'c.d', payload: {} }), {
      id: 'evt_c.d',
      deliveries: [],
    });
    assert.equal(seen.at(-1)?.authorization, 'Bearer sk_global');
  });
});
