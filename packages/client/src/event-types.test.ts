/**
 * `sluice.eventTypes` without a server: a fake `fetch` records each request. What is checked
 * is what goes on the wire (method, URL, body) and what the caller gets back.
 */

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Sluice } from './client.ts';
import { SluiceError } from './errors.ts';
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

const TYPE = {
  name: 'order.paid',
  description: 'An order was paid.',
  schema: { type: 'object' },
  builtIn: false,
  createdAt: '2026-01-15T10:30:00.000Z',
  updatedAt: '2026-01-15T10:30:00.000Z',
};

describe('eventTypes', () => {
  it('sends each method to its route, with its body, and returns the answer', async () => {
    const { fetch, sent } = fakeFetch((req) => ({
      status: req.method === 'DELETE' ? 204 : req.method === 'POST' ? 201 : 200,
      json:
        req.method === 'DELETE'
          ? undefined
          : req.url.includes('?')
            ? { data: [TYPE], nextCursor: null }
            : TYPE,
    }));
    const sluice = new Sluice({ baseUrl: 'http://api.test', token: 'sa_admin', fetch });
    const input = {
      name: 'order.paid',
      description: 'An order was paid.',
      schema: { type: 'object' },
      example: {},
    };
    assert.deepEqual(await sluice.eventTypes.create(input), TYPE);
    assert.deepEqual(await sluice.eventTypes.get('order.paid'), TYPE);
    assert.deepEqual(await sluice.eventTypes.update('order.paid', { schema: null }), TYPE);
    assert.equal(await sluice.eventTypes.delete('order.paid'), undefined);
    assert.deepEqual(await sluice.eventTypes.list({ limit: 10 }), { data: [TYPE], nextCursor: null });
    assert.deepEqual(
      sent.map((r) => [r.method, r.url, r.body === undefined ? undefined : JSON.parse(r.body)]),
      [
        ['POST', 'http://api.test/v1/event-types', input],
        ['GET', 'http://api.test/v1/event-types/order.paid', undefined],
        ['PATCH', 'http://api.test/v1/event-types/order.paid', { schema: null }],
        ['DELETE', 'http://api.test/v1/event-types/order.paid', undefined],
        ['GET', 'http://api.test/v1/event-types?limit=10', undefined],
      ],
    );
  });

  it('listAll walks the name cursors until nextCursor is null', async () => {
    const pages: Record<string, { data: { name: string }[]; nextCursor: string | null }> = {
      start: { data: [{ name: 'a' }, { name: 'b' }], nextCursor: 'Yg' },
      Yg: { data: [{ name: 'sluice.test' }], nextCursor: null },
    };
    const { fetch, sent } = fakeFetch((req) => ({
      status: 200,
      json: pages[new URL(req.url).searchParams.get('cursor') ?? 'start'],
    }));
    const sluice = new Sluice({ baseUrl: 'http://api.test', token: 'sk_tenant', fetch });
    const names: string[] = [];
    for await (const type of sluice.eventTypes.listAll({ limit: 2 })) names.push(type.name);
    assert.deepEqual(names, ['a', 'b', 'sluice.test']);
    assert.deepEqual(
      sent.map((r) => new URL(r.url).search),
      ['?limit=2', '?limit=2&cursor=Yg'],
    );
  });

  it("a refusal is a SluiceError with the server's code and issues", async () => {
    const { fetch } = fakeFetch(() => ({
      status: 400,
      json: {
        error: {
          code: 'validation_failed',
          message: 'example: does not satisfy the schema',
          details: [{ path: '/example/amount', message: 'must be integer' }],
        },
      },
    }));
    const sluice = new Sluice({ baseUrl: 'http://api.test', token: 'sa_admin', fetch });
    const err = await sluice.eventTypes
      .create({ name: 'order.paid', description: 'd', example: { amount: 'x' } })
      .then(
        () => assert.fail('expected a refusal'),
        (e: unknown) => e,
      );
    assert.ok(err instanceof SluiceError);
    assert.equal(err.status, 400);
    assert.equal(err.code, 'validation_failed');
    assert.deepEqual(
      err.issues.map((i) => i.path),
      ['/example/amount'],
    );
  });
});
