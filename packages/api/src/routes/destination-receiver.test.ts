/**
 * A destination's `headers` and `auth` through `app.inject`: kept and shown (secrets never),
 * replaced and removed by PATCH, and every bad value refused at its path with nothing changed.
 */

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Destination, DestinationWithSecret } from '@sluice/client';
import { assertError, DESTINATION, type TestApi, testApi } from '../test-app.ts';

describe('/v1/destinations: headers and auth', () => {
  let api: TestApi;
  let key: string;

  before(async () => {
    api = await testApi();
    ({ key } = await api.tenant());
  });
  after(() => api.close());

  const call = (method: 'GET' | 'POST' | 'PATCH', url: string, body?: unknown) =>
    api.inject(method, url, { token: key, body });
  const create = async (fields: object): Promise<DestinationWithSecret> => {
    const res = await call('POST', '/v1/destinations', { ...DESTINATION, ...fields });
    assert.equal(res.statusCode, 201, res.body);
    return res.json<DestinationWithSecret>();
  };
  const paths = (res: { json<T>(): T }) =>
    (res.json<{ error: { details: { path: string }[] } }>().error.details ?? []).map((d) => d.path).sort();

  it('keeps headers and shows them; shows a credential without its secret, in every answer', async () => {
    const cases = [
      [{ type: 'bearer', token: 'tok-SECRET-1' }, { type: 'bearer' }, 'tok-SECRET-1'],
      [
        { type: 'basic', username: 'acme', password: 'pw-SECRET-2' },
        { type: 'basic', username: 'acme' },
        'pw-SECRET-2',
      ],
      [
        { type: 'header', name: 'X-Api-Key', value: 'key-SECRET-3' },
        { type: 'header', name: 'X-Api-Key' },
        'key-SECRET-3',
      ],
      [
        {
          type: 'oauth2_client_credentials',
          tokenUrl: 'https://auth.example.com/oauth/token',
          clientId: 'sluice',
          clientSecret: 'cs-SECRET-4',
          scope: 'webhooks',
        },
        {
          type: 'oauth2_client_credentials',
          tokenUrl: 'https://auth.example.com/oauth/token',
          clientId: 'sluice',
          scope: 'webhooks',
        },
        'cs-SECRET-4',
      ],
    ] as const;
    for (const [auth, shown, secret] of cases) {
      const d = await create({ headers: { 'X-Tenant': 'acme', 'User-Agent': 'acme-hooks' }, auth });
      assert.deepEqual(d.headers, { 'X-Tenant': 'acme', 'User-Agent': 'acme-hooks' });
      assert.deepEqual(d.auth, shown);
      for (const res of [
        await call('GET', `/v1/destinations/${d.id}`),
        await call('GET', '/v1/destinations?limit=500'),
        await call('GET', '/v1/destinations/stats?limit=500'),
        await call('GET', `/v1/destinations/${d.id}/secret`),
        await call('PATCH', `/v1/destinations/${d.id}`, { name: 'renamed' }),
      ]) {
        assert.ok(res.statusCode < 300, res.body);
        assert.ok(!res.body.includes(secret), `no answer holds the secret: ${res.body.slice(0, 200)}`);
      }
      assert.ok(!JSON.stringify(d).includes(secret), 'nor the answer to the create');
    }
  });

  it('PATCH replaces headers and auth; null removes them; other fields leave them as they are', async () => {
    const d = await create({ headers: { 'X-A': '1' }, auth: { type: 'bearer', token: 't1' } });
    const patch = async (body: object) => {
      const res = await call('PATCH', `/v1/destinations/${d.id}`, body);
      assert.equal(res.statusCode, 200, res.body);
      return res.json<Destination>();
    };
    assert.deepEqual((await patch({ timeoutMs: 2_000 })).headers, { 'X-A': '1' });
    const replaced = await patch({
      headers: { 'X-B': '2' },
      auth: { type: 'basic', username: 'u', password: '' },
    });
    assert.deepEqual(replaced.headers, { 'X-B': '2' });
    assert.deepEqual(replaced.auth, { type: 'basic', username: 'u' });
    const removed = await patch({ headers: null, auth: null });
    assert.deepEqual(removed.headers, {});
    assert.equal(removed.auth, null);
    // With auth gone, authorization is a header like any other.
    assert.deepEqual((await patch({ headers: { Authorization: 'Token abc' } })).headers, {
      Authorization: 'Token abc',
    });
  });

  it('refuses every bad header at headers.<name>, all at once, and creates nothing', async () => {
    const before = (await call('GET', '/v1/destinations?limit=500')).json<{ data: unknown[] }>().data.length;
    const res = await call('POST', '/v1/destinations', {
      ...DESTINATION,
      headers: {
        Host: 'evil',
        'Content-Type': 'text/plain',
        'content-length': '1',
        'Transfer-Encoding': 'chunked',
        Connection: 'close',
        'Webhook-Signature': 'v1,forged',
        'bad name': 'x',
        'X-Newline': 'a\r\nX-Evil: 1',
        'X-Tab': 'a\tb',
        'X-Accent': 'é',
        'x-dup': '1',
        'X-Dup': '2',
      },
    });
    assertError(res, 400, 'validation_failed');
    assert.deepEqual(paths(res), [
      'headers.Connection',
      'headers.Content-Type',
      'headers.Host',
      'headers.Transfer-Encoding',
      'headers.Webhook-Signature',
      'headers.X-Accent',
      'headers.X-Dup',
      'headers.X-Newline',
      'headers.X-Tab',
      'headers.bad name',
      'headers.content-length',
    ]);
    const many = Object.fromEntries(Array.from({ length: 21 }, (_, i) => [`x-h${i}`, 'v']));
    assertError(
      await call('POST', '/v1/destinations', { ...DESTINATION, headers: many }),
      400,
      'validation_failed',
      'headers',
    );
    const big = { 'x-a': 'v'.repeat(4_100), 'x-b': 'v'.repeat(4_100) };
    assertError(
      await call('POST', '/v1/destinations', { ...DESTINATION, headers: big }),
      400,
      'validation_failed',
      'headers',
    );
    const after = (await call('GET', '/v1/destinations?limit=500')).json<{ data: unknown[] }>().data.length;
    assert.equal(after, before, 'nothing created');
  });

  it('refuses authorization beside auth, and a header credential named as a header, also over a PATCH', async () => {
    const auth = { type: 'bearer', token: 't' };
    assertError(
      await call('POST', '/v1/destinations', { ...DESTINATION, auth, headers: { Authorization: 'x' } }),
      400,
      'validation_failed',
      'headers.Authorization',
    );
    assertError(
      await call('POST', '/v1/destinations', {
        ...DESTINATION,
        auth: { type: 'header', name: 'x-api-key', value: 'k' },
        headers: { 'X-API-Key': 'other' },
      }),
      400,
      'validation_failed',
      'headers.X-API-Key',
    );
    const d = await create({ headers: { authorization: 'Token t' } });
    assertError(
      await call('PATCH', `/v1/destinations/${d.id}`, { auth }),
      400,
      'validation_failed',
      'headers.authorization',
    );
    const withAuth = await create({ auth });
    assertError(
      await call('PATCH', `/v1/destinations/${withAuth.id}`, { headers: { Authorization: 'x' } }),
      400,
      'validation_failed',
      'headers.Authorization',
    );
    const unchanged = (await call('GET', `/v1/destinations/${d.id}`)).json<Destination>();
    assert.equal(unchanged.auth, null, 'the refused PATCH changed nothing');
  });

  const OAUTH = {
    type: 'oauth2_client_credentials',
    tokenUrl: 'https://auth.example.com/oauth/token',
    clientId: 'sluice',
    clientSecret: 'cs',
  };

  it('refuses a token endpoint on a private address, as it refuses such a url', async () => {
    for (const tokenUrl of ['http://10.0.0.8/token', 'http://169.254.169.254/token', 'http://[::1]/token']) {
      const res = await call('POST', '/v1/destinations', { ...DESTINATION, auth: { ...OAUTH, tokenUrl } });
      assertError(res, 400, 'destination_not_allowed');
      assert.match(res.json<{ error: { message: string } }>().error.message, /^auth\.tokenUrl: /);
    }
    const d = await create({});
    const res = await call('PATCH', `/v1/destinations/${d.id}`, {
      auth: { ...OAUTH, tokenUrl: 'http://127.0.0.1:9/token' },
    });
    assertError(res, 400, 'destination_not_allowed');
    assert.equal(
      (await call('GET', `/v1/destinations/${d.id}`)).json<Destination>().auth,
      null,
      'nothing changed',
    );
  });

  it('refuses bad credentials at their paths', async () => {
    const bad: [unknown, string][] = [
      [{ type: 'bearer', token: '' }, 'auth.token'],
      [{ type: 'bearer', token: 'has space' }, 'auth.token'],
      [{ type: 'bearer', token: 'line\nbreak' }, 'auth.token'],
      [{ type: 'basic', username: 'a:b', password: 'p' }, 'auth.username'],
      [{ type: 'basic', username: 'a', password: 'p\r\n' }, 'auth.password'],
      [{ type: 'basic', username: 'a' }, 'auth.password'],
      [{ type: 'header', name: 'content-type', value: 'v' }, 'auth.name'],
      [{ type: 'header', name: 'authorization', value: 'v' }, 'auth.name'],
      [{ type: 'header', name: 'webhook-id', value: 'v' }, 'auth.name'],
      [{ type: 'header', name: 'x-key', value: 'a\r\nb' }, 'auth.value'],
      [{ type: 'bearer', token: 't', extra: 1 }, 'auth.extra'],
      [{ type: 'kerberos' }, 'auth.type'],
      [{ ...OAUTH, tokenUrl: 'ftp://auth.example.com/token' }, 'auth.tokenUrl'],
      [{ ...OAUTH, tokenUrl: 'https://user:pw@auth.example.com/token' }, 'auth.tokenUrl'],
      [{ ...OAUTH, clientId: '' }, 'auth.clientId'],
      [{ ...OAUTH, clientSecret: undefined }, 'auth.clientSecret'],
      [{ ...OAUTH, scope: 'a\nb' }, 'auth.scope'],
      [{ ...OAUTH, audience: 7 }, 'auth.audience'],
    ];
    for (const [auth, path] of bad)
      assertError(
        await call('POST', '/v1/destinations', { ...DESTINATION, auth }),
        400,
        'validation_failed',
        path,
      );
  });
});
