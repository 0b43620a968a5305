/**
 * `/v1/event-types` through `app.inject`: the catalog's CRUD, the built-in `sluice.…` types,
 * pages, and the bad-input matrix (names, the reserved prefix, a bad schema, an example that
 * fails it, a tenant key on the admin routes, an unknown name).
 */

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { BUILT_IN_EVENT_TYPES } from '@sluice/core';
import { compileSchema, schemaIssues } from '../event-catalog.ts';
import { ADMIN_TOKEN, assertError, type TestApi, testApi } from '../test-app.ts';

interface EventTypeBody {
  name: string;
  description: string;
  schema: Record<string, unknown> | null;
  example?: unknown;
  builtIn: boolean;
  createdAt: string | null;
  updatedAt: string | null;
}

const SCHEMA = {
  type: 'object',
  required: ['amount'],
  properties: { amount: { type: 'integer', minimum: 0 }, currency: { type: 'string' } },
};

describe('/v1/event-types', () => {
  let api: TestApi;
  let tenantKey: string;
  before(async () => {
    api = await testApi();
    tenantKey = (await api.tenant()).key;
  });
  after(() => api.close());

  const admin = { token: ADMIN_TOKEN };

  it('create, read, change and delete a type; any token reads it', async () => {
    const body = {
      name: 'order.paid',
      description: 'An order was paid.',
      schema: SCHEMA,
      example: { amount: 5 },
    };
    const res = await api.inject('POST', '/v1/event-types', { ...admin, body });
    assert.equal(res.statusCode, 201, res.body);
    const created = res.json<EventTypeBody>();
    assert.deepEqual(
      { ...created, createdAt: null, updatedAt: null },
      {
        ...body,
        builtIn: false,
        createdAt: null,
        updatedAt: null,
      },
    );
    assert.ok(created.createdAt !== null && Math.abs(Date.parse(created.createdAt) - Date.now()) < 60_000);
    assertError(await api.inject('POST', '/v1/event-types', { ...admin, body }), 409, 'conflict');

    for (const token of [ADMIN_TOKEN, tenantKey]) {
      const read = await api.inject('GET', '/v1/event-types/order.paid', { token });
      assert.equal(read.statusCode, 200, read.body);
      assert.deepEqual(read.json(), created);
    }

    const patched = await api.inject('PATCH', '/v1/event-types/order.paid', {
      ...admin,
      body: { description: 'Paid.', example: { amount: 7, currency: 'EUR' } },
    });
    assert.equal(patched.statusCode, 200, patched.body);
    assert.deepEqual(patched.json<EventTypeBody>().example, { amount: 7, currency: 'EUR' });
    assert.deepEqual(patched.json<EventTypeBody>().schema, SCHEMA, 'left out: kept');
    assert.equal(patched.json<EventTypeBody>().description, 'Paid.');

    const cleared = await api.inject('PATCH', '/v1/event-types/order.paid', {
      ...admin,
      body: { schema: null, example: null },
    });
    assert.equal(cleared.statusCode, 200, cleared.body);
    assert.equal(cleared.json<EventTypeBody>().schema, null);
    assert.equal('example' in cleared.json<EventTypeBody>(), false);

    const deleted = await api.inject('DELETE', '/v1/event-types/order.paid', admin);
    assert.equal(deleted.statusCode, 204);
    assertError(await api.inject('GET', '/v1/event-types/order.paid', admin), 404, 'not_found');
    assertError(await api.inject('DELETE', '/v1/event-types/order.paid', admin), 404, 'not_found');
    assertError(
      await api.inject('PATCH', '/v1/event-types/order.paid', { ...admin, body: { description: 'x' } }),
      404,
      'not_found',
    );
  });

  it('the built-in sluice.* types are listed and read, never changed nor deleted (409 conflict)', async () => {
    const read = await api.inject('GET', '/v1/event-types/sluice.delivery.dead', { token: tenantKey });
    assert.equal(read.statusCode, 200, read.body);
    const dead = read.json<EventTypeBody>();
    assert.equal(dead.builtIn, true);
    assert.equal(dead.createdAt, null);
    assert.ok(dead.schema !== null);
    const error = assertError(
      await api.inject('PATCH', '/v1/event-types/sluice.delivery.dead', {
        ...admin,
        body: { description: 'x' },
      }),
      409,
      'conflict',
    );
    assert.deepEqual(error.details, { name: 'sluice.delivery.dead', builtIn: true });
    assertError(await api.inject('DELETE', '/v1/event-types/sluice.test', admin), 409, 'conflict');
    assertError(await api.inject('GET', '/v1/event-types/sluice.nothing', admin), 404, 'not_found');
  });

  it('each built-in example satisfies its schema, and the payload has its five fields', () => {
    assert.equal(BUILT_IN_EVENT_TYPES.length, 9);
    for (const type of BUILT_IN_EVENT_TYPES) {
      assert.ok(type.schema !== null, type.name);
      assert.deepEqual(schemaIssues(compileSchema(type.schema), type.example, ''), [], type.name);
      assert.deepEqual(Object.keys(type.example as object), [
        'type',
        'tenantId',
        'destinationId',
        'occurredAt',
        'data',
      ]);
      const wrongType = { ...(type.example as object), type: 'order.paid' };
      assert.notDeepEqual(schemaIssues(compileSchema(type.schema), wrongType, ''), [], type.name);
    }
  });

  it('the list: by name, the built-ins among the operator’s types, in pages', async () => {
    const mine = ['a.first', 'order.refunded', 'zzz.last', 'sluice_not_reserved'];
    for (const name of mine) {
      const res = await api.inject('POST', '/v1/event-types', {
        ...admin,
        body: { name, description: name },
      });
      assert.equal(res.statusCode, 201, res.body);
    }
    const expected = [...mine, ...BUILT_IN_EVENT_TYPES.map((t) => t.name)].sort();
    const seen: string[] = [];
    let cursor: string | null = null;
    for (let i = 0; i < 10; i++) {
      const url: string = `/v1/event-types?limit=3${cursor === null ? '' : `&cursor=${cursor}`}`;
      const res = await api.inject('GET', url, { token: tenantKey });
      assert.equal(res.statusCode, 200, res.body);
      const page = res.json<{ data: EventTypeBody[]; nextCursor: string | null }>();
      assert.ok(page.data.length <= 3);
      seen.push(...page.data.map((t) => t.name));
      cursor = page.nextCursor;
      if (cursor === null) break;
    }
    assert.deepEqual(seen, expected);
    const all = await api.inject('GET', '/v1/event-types?limit=500', admin);
    assert.deepEqual(
      all.json<{ data: EventTypeBody[] }>().data.map((t) => t.name),
      expected,
    );
    assert.equal(all.json<{ nextCursor: string | null }>().nextCursor, null);
    assertError(
      await api.inject('GET', '/v1/event-types?cursor=%25%25', admin),
      400,
      'validation_failed',
      'query.cursor',
    );
    for (const name of mine) await api.inject('DELETE', `/v1/event-types/${name}`, admin);
  });

  it('bad names: wildcards, empty words, other characters, too long, the reserved prefix', async () => {
    for (const name of [
      'order.*',
      '*',
      'order..paid',
      '.order',
      'order.',
      'order paid',
      'ordér',
      '',
      'a'.repeat(201),
      'sluice.custom',
      'sluice.test',
    ]) {
      assertError(
        await api.inject('POST', '/v1/event-types', { ...admin, body: { name, description: 'd' } }),
        400,
        'validation_failed',
        'name',
      );
    }
    const longest = 'a'.repeat(200);
    const res = await api.inject('POST', '/v1/event-types', {
      ...admin,
      body: { name: longest, description: 'd' },
    });
    assert.equal(res.statusCode, 201, res.body);
    await api.inject('DELETE', `/v1/event-types/${longest}`, admin);
  });

  it('a bad schema and an example that fails the schema: 400 naming the paths; nothing created', async () => {
    const bad = assertError(
      await api.inject('POST', '/v1/event-types', {
        ...admin,
        body: { name: 'bad.schema', description: 'd', schema: { type: 'nope' } },
      }),
      400,
      'validation_failed',
      '/schema/type',
    );
    assert.match(bad.message, /schema/);
    assertError(
      await api.inject('POST', '/v1/event-types', {
        ...admin,
        body: { name: 'bad.ref', description: 'd', schema: { $ref: 'https://example.com/s.json' } },
      }),
      400,
      'validation_failed',
      '/schema',
    );
    const example = assertError(
      await api.inject('POST', '/v1/event-types', {
        ...admin,
        body: { name: 'bad.example', description: 'd', schema: SCHEMA, example: { amount: -1, currency: 3 } },
      }),
      400,
      'validation_failed',
      '/example/amount',
    );
    assert.ok((example.details as { path: string }[]).some((i) => i.path === '/example/currency'));
    assertError(
      await api.inject('POST', '/v1/event-types', {
        ...admin,
        body: { name: 'bad.missing', description: 'd', schema: SCHEMA, example: {} },
      }),
      400,
      'validation_failed',
      '/example/amount',
    );
    for (const name of ['bad.schema', 'bad.ref', 'bad.example', 'bad.missing'])
      assertError(await api.inject('GET', `/v1/event-types/${name}`, admin), 404, 'not_found');

    // A change that leaves the example failing the schema is refused whole.
    await api.inject('POST', '/v1/event-types', {
      ...admin,
      body: { name: 'ok.type', description: 'd', schema: SCHEMA, example: { amount: 1 } },
    });
    assertError(
      await api.inject('PATCH', '/v1/event-types/ok.type', {
        ...admin,
        body: { schema: { type: 'string' } },
      }),
      400,
      'validation_failed',
      '/example',
    );
    assert.deepEqual(
      (await api.inject('GET', '/v1/event-types/ok.type', admin)).json<EventTypeBody>().schema,
      SCHEMA,
    );
    assertError(
      await api.inject('POST', '/v1/event-types', { ...admin, body: { name: 'no.description' } }),
      400,
      'validation_failed',
      'description',
    );
    assertError(
      await api.inject('POST', '/v1/event-types', {
        ...admin,
        body: { name: 'x.y', description: 'd', extra: 1 },
      }),
      400,
      'validation_failed',
      'extra',
    );
    await api.inject('DELETE', '/v1/event-types/ok.type', admin);
  });

  it('a tenant key on the admin routes: 403 forbidden; no token: 401', async () => {
    const token = tenantKey;
    const body = { name: 'order.paid', description: 'd' };
    assertError(await api.inject('POST', '/v1/event-types', { token, body }), 403, 'forbidden');
    assertError(
      await api.inject('PATCH', '/v1/event-types/order.paid', { token, body: { description: 'x' } }),
      403,
      'forbidden',
    );
    assertError(await api.inject('DELETE', '/v1/event-types/order.paid', { token }), 403, 'forbidden');
    assertError(await api.inject('GET', '/v1/event-types'), 401, 'unauthorized');
    assertError(await api.inject('POST', '/v1/event-types', { body }), 401, 'unauthorized');
  });
});

describe('the OpenAPI document', () => {
  it('lists each built-in type under webhooks with its schema and example', async () => {
    const api = await testApi();
    try {
      const doc = (await api.inject('GET', '/openapi.json')).json<{
        webhooks: Record<
          string,
          { post: { requestBody: { content: Record<string, { schema: unknown; example: unknown }> } } }
        >;
      }>();
      assert.deepEqual(Object.keys(doc.webhooks).sort(), BUILT_IN_EVENT_TYPES.map((t) => t.name).sort());
      for (const type of BUILT_IN_EVENT_TYPES) {
        const body = doc.webhooks[type.name]?.post.requestBody.content['application/json'];
        assert.deepEqual(body, { schema: type.schema, example: type.example }, type.name);
      }
    } finally {
      await api.close();
    }
  });
});
