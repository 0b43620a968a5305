/**
 * Limits are 4xx in the API's error format, never a crash or a 500: a payload nested deeper
 * than `maxPayloadDepth` is a `400 validation_failed` naming it (however deep: the check
 * runs before anything recursive), and a header block over Node's `maxHeaderSize` or a
 * malformed request is answered in `{error: {code, message, details}}` (a real server: Node
 * answers these before fastify sees a request).
 */

import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { nestsDeeper } from './depth.ts';
import { assertError, type TestApi, testApi } from './test-app.ts';

/** `[[…[]…]]`, `depth` levels, as a parsed value (JSON.parse takes any depth). */
const nested = (depth: number): unknown => JSON.parse('['.repeat(depth) + ']'.repeat(depth));

describe('nestsDeeper', () => {
  it('counts objects and arrays, not scalars; walks any depth without recursion', () => {
    assert.equal(nestsDeeper(1, 0), false);
    assert.equal(nestsDeeper({}, 0), true);
    assert.equal(nestsDeeper({ a: [1, { b: 'x' }] }, 3), false);
    assert.equal(nestsDeeper({ a: [1, { b: {} }] }, 3), true);
    assert.equal(nestsDeeper(nested(100), 100), false);
    assert.equal(nestsDeeper(nested(101), 100), true);
    assert.equal(nestsDeeper(nested(1_000_000), 100), true);
    assert.equal(nestsDeeper(JSON.parse(`${'{"a":'.repeat(100_000)}1${'}'.repeat(100_000)}`), 100), true);
  });
});

describe('the payload nesting limit', () => {
  let api: TestApi;
  let key: string;

  before(async () => {
    api = await testApi({ maxPayloadBytes: 1024 * 1024, maxRequestBytes: 4 * 1024 * 1024 });
    ({ key } = await api.tenant());
  });
  after(() => api.close());

  const post = (url: string, body: unknown) => api.inject('POST', url, { token: key, body });
  /** A body as JSON text: a value this deep would overflow the test's own JSON.stringify. */
  const postText = (url: string, text: string) =>
    api.app.inject({
      method: 'POST',
      url,
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      payload: text,
    });
  const deep = (depth: number) => '['.repeat(depth) + ']'.repeat(depth);

  it('100 levels are accepted', async () => {
    const res = await post('/v1/events', { type: 'deep', payload: nested(100) });
    assert.equal(res.statusCode, 202, res.body);
  });

  it('101 levels: 400 validation_failed at payload', async () => {
    const error = assertError(
      await post('/v1/events', { type: 'deep', payload: nested(101) }),
      400,
      'validation_failed',
      'payload',
    );
    assert.match(error.message, /^payload: nests deeper than 100 levels$/);
  });

  it('100,000 levels (200 kB, inside the body limit): a 400, not a crash', async () => {
    const res = await postText('/v1/events', `{"type":"deep","payload":${deep(100_000)}}`);
    assertError(res, 400, 'validation_failed', 'payload');
  });

  it('in a batch: each deep payload by its path, nothing accepted', async () => {
    const events = [
      `{"type":"ok","payload":${deep(3)}}`,
      `{"type":"deep","payload":${deep(100_000)}}`,
      `{"type":"deep","payload":{"a":${deep(100)}}}`,
    ];
    const res = await postText('/v1/events/batch', `{"events":[${events.join(',')}]}`);
    const error = assertError(res, 400, 'validation_failed', 'events.1.payload');
    assert.deepEqual(
      (error.details as { path: string }[]).map((d) => d.path),
      ['events.1.payload', 'events.2.payload'],
    );
  });

  it('deep JSON anywhere else in a body is a plain schema error, on any route', async () => {
    assertError(
      await postText('/v1/events', `{"type":${deep(100_000)},"payload":1}`),
      400,
      'validation_failed',
      'type',
    );
    assertError(await postText('/v1/events', deep(100_000)), 400, 'validation_failed');
    const destination = `{"url":"https://hooks.example.com/x","rateLimit":{"limit":1,"period":"second"},"eventTypes":${deep(100_000)}}`;
    assertError(await postText('/v1/destinations', destination), 400, 'validation_failed', 'eventTypes.0');
  });
});

describe('what Node answers before fastify: in the API’s error format', () => {
  let api: TestApi;
  let port: number;
  let key: string;

  before(async () => {
    api = await testApi();
    ({ key } = await api.tenant());
    await api.app.listen({ port: 0, host: '127.0.0.1' });
    port = (api.app.server.address() as { port: number }).port;
  });
  after(() => api.close());

  /** Sends `request` as raw bytes; the whole answer, until the server closes. */
  const raw = (request: string): Promise<string> =>
    new Promise((resolve, reject) => {
      const socket = connect(port, '127.0.0.1');
      let answer = '';
      socket.setEncoding('utf8');
      socket.on('data', (chunk) => {
        answer += chunk;
      });
      socket.on('error', (err: NodeJS.ErrnoException) => (answer ? resolve(answer) : reject(err)));
      socket.on('close', () => resolve(answer));
      socket.write(request);
    });

  const parse = (answer: string) => {
    const [head = '', body = ''] = answer.split('\r\n\r\n');
    const status = Number(head.split(' ')[1]);
    return {
      status,
      head,
      body: JSON.parse(body) as { error: { code: string; message: string; details: unknown } },
    };
  };

  it('a 64 kB header: 431 request_header_too_large', async () => {
    const answer = parse(
      await raw(`GET /v1/alerts HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(64 * 1024)}\r\n\r\n`),
    );
    assert.equal(answer.status, 431);
    assert.match(answer.head, /content-type: application\/json/i);
    assert.deepEqual(answer.body, {
      error: {
        code: 'request_header_too_large',
        message: 'the request headers are too large',
        details: null,
      },
    });
  });

  it('a path id of 10,000 characters is read (400 naming it); a request line over the limit is a 431', async () => {
    const long = await fetch(`http://127.0.0.1:${port}/v1/destinations/${'x'.repeat(10_000)}`, {
      headers: { authorization: `Bearer ${key}` },
    });
    assert.equal(long.status, 400);
    const body = (await long.json()) as { error: { code: string; details: { path: string }[] } };
    assert.equal(body.error.code, 'validation_failed');
    assert.deepEqual(
      body.error.details.map((d) => d.path),
      ['params.id'],
    );
    const over = parse(await raw(`GET /v1/destinations/${'x'.repeat(20_000)} HTTP/1.1\r\nHost: x\r\n\r\n`));
    assert.equal(over.status, 431);
    assert.equal(over.body.error.code, 'request_header_too_large');
  });

  it('a malformed request: 400 validation_failed', async () => {
    const answer = parse(await raw('NOT HTTP AT ALL\r\n\r\n'));
    assert.equal(answer.status, 400);
    assert.equal(answer.body.error.code, 'validation_failed');
  });

  it('the server still answers after both', async () => {
    const res = await fetch(`http://127.0.0.1:${port}/healthz`);
    assert.equal(res.status, 200);
  });
});
