/**
 * Receivers that want more than a URL (docs/api.md "Custom headers and credentials"), in the
 * shape under test, against a real receiver on loopback that answers `401` unless a request
 * carries what it checks:
 *
 * - a bearer token, HTTP Basic and an API key in a header of its own each get every event
 *   through, with the destination's own headers beside them and the signature unchanged;
 * - a wrong credential is refused by the receiver (the attempts show its `401`) until a PATCH
 *   puts the right one in, and the retry then arrives;
 * - the credential's secret is in no answer and not in the clear in the store's column, nor
 *   (in the single box) anywhere in the database file and its WAL.
 */

import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Webhook } from 'standardwebhooks';
import { fileBox } from './helpers/client.ts';
import { SHAPE } from './helpers/shape.ts';
import { waitUntil } from './helpers/sluice.ts';

const get = fileBox();

interface Seen {
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
  status: number;
}

/** Per path, the headers a request must carry (lower-case names) to be answered 200. */
const CHECKS: Record<string, Record<string, string>> = {
  '/bearer': { authorization: 'Bearer tok-7Qk2-secret' },
  '/basic': { authorization: `Basic ${Buffer.from('acme:pw-9Zx-secret').toString('base64')}` },
  '/apikey': { 'x-api-key': 'key-4Hd-secret', 'x-tenant': 'acme' },
  '/rotated': { authorization: 'Bearer tok-right-secret' },
};
const SECRETS = [
  'tok-7Qk2-secret',
  'pw-9Zx-secret',
  'key-4Hd-secret',
  'tok-wrong-secret',
  'tok-right-secret',
];

describe('receivers that check credentials', () => {
  let server: Server;
  let origin = '';
  const seen: Seen[] = [];

  before(async () => {
    server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const want = CHECKS[req.url ?? ''] ?? {};
        const ok = Object.entries(want).every(([name, value]) => req.headers[name] === value);
        const status = ok ? 200 : 401;
        seen.push({
          path: req.url ?? '',
          headers: req.headers,
          body: Buffer.concat(chunks).toString(),
          status,
        });
        res
          .writeHead(status, { 'content-type': 'text/plain' })
          .end(ok ? 'ok' : 'missing or wrong credentials');
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(() => new Promise<void>((resolve) => server.close(() => resolve())));

  const delivered = (path: string) =>
    new Set(seen.filter((s) => s.path === path && s.status === 200).map((s) => s.headers['webhook-id']));

  it('bearer, basic and a header credential, with headers of its own: every event arrives, signed as before', async () => {
    const { api } = await get().tenant('credentials');
    const destinations = [
      { path: '/bearer', auth: { type: 'bearer', token: 'tok-7Qk2-secret' } },
      { path: '/basic', auth: { type: 'basic', username: 'acme', password: 'pw-9Zx-secret' } },
      {
        path: '/apikey',
        auth: { type: 'header', name: 'X-Api-Key', value: 'key-4Hd-secret' },
        headers: { 'X-Tenant': 'acme' },
      },
    ] as const;
    const created = [];
    for (const d of destinations)
      created.push(
        await api.destinations.create({
          url: origin + d.path,
          rateLimit: { limit: 50, period: 'second' },
          auth: d.auth,
          ...('headers' in d ? { headers: d.headers } : {}),
        }),
      );
    const sent = new Map<string, string[]>();
    for (const [i, d] of created.entries()) {
      const ids: string[] = [];
      for (let n = 0; n < 5; n++)
        ids.push((await api.events.send({ type: 'cred.test', payload: { n }, destinationId: d.id })).id);
      sent.set(destinations[i]!.path, ids);
    }
    for (const [path, ids] of sent)
      await waitUntil(
        async () => ids.every((id) => delivered(path).has(id)),
        20_000,
        `the 5 events at ${path}`,
      );
    for (const [i, d] of destinations.entries()) {
      const arrivals = seen.filter((s) => s.path === d.path);
      assert.ok(
        arrivals.every((s) => s.status === 200),
        `${d.path}: no request refused`,
      );
      const first = arrivals[0]!;
      const headers = Object.fromEntries(
        Object.entries(first.headers).filter((e): e is [string, string] => typeof e[1] === 'string'),
      );
      assert.ok(new Webhook(created[i]!.secret).verify(first.body, headers), 'the signature verifies');
      assert.match(headers['user-agent'] ?? '', /^Sluice\//);
    }
  });

  it('a wrong credential: the receiver refuses it (401 in the attempts) until a PATCH puts the right one in', async () => {
    const { api } = await get().tenant('rotation');
    const d = await api.destinations.create({
      url: `${origin}/rotated`,
      rateLimit: { limit: 50, period: 'second' },
      auth: { type: 'bearer', token: 'tok-wrong-secret' },
      retry: { maxAttempts: 20, initialDelayMs: 200, maxDelayMs: 1_000 },
    });
    const { id } = await api.events.send({ type: 'cred.test', payload: { n: 1 }, destinationId: d.id });
    const [delivery] = (await api.deliveries.list({ eventId: id })).data;
    assert.ok(delivery);
    await waitUntil(
      async () => (await api.deliveries.get(delivery.id)).attempts.some((a) => a.statusCode === 401),
      20_000,
      'an attempt refused 401',
    );
    const patched = await api.destinations.update(d.id, {
      auth: { type: 'bearer', token: 'tok-right-secret' },
    });
    assert.deepEqual(patched.auth, { type: 'bearer' });
    await waitUntil(async () => delivered('/rotated').has(id), 20_000, 'the retry with the new token');
    const got = await waitUntil(
      async () => {
        const now = await api.deliveries.get(delivery.id);
        return now.status === 'delivered' ? now : undefined;
      },
      10_000,
      'the delivery recorded delivered',
    );
    assert.ok(
      got.attempts.some((a) => a.statusCode === 401) && got.attempts.some((a) => a.statusCode === 200),
    );
  });

  it('no secret in any answer, none in the clear in the store', async () => {
    const box = get();
    const { tenant } = await box.tenant('lister');
    for (const body of [
      JSON.stringify(await box.admin.destinations.list({ limit: 500 })),
      JSON.stringify(await box.client(tenant.apiKey).destinations.list({ limit: 500 })),
    ])
      for (const secret of SECRETS) assert.ok(!body.includes(secret), `an answer holds ${secret}`);
    const rows = await box.query<{ auth: unknown }>('SELECT auth FROM destinations WHERE auth IS NOT NULL');
    assert.ok(rows.length >= 4, `${rows.length} destinations with a credential`);
    const column = JSON.stringify(rows);
    for (const secret of SECRETS) assert.ok(!column.includes(secret), `the auth column holds ${secret}`);
    assert.match(column, /enc:v1:/);
    if (SHAPE === 'single') {
      const file = join(box.childEnv().SLUICE_DATA_DIR as string, 'sluice.db');
      const bytes = Buffer.concat(
        [file, `${file}-wal`].filter((f) => existsSync(f)).map((f) => readFileSync(f)),
      ).toString('latin1');
      assert.ok(bytes.length > 0);
      for (const secret of SECRETS) assert.ok(!bytes.includes(secret), `the database file holds ${secret}`);
    }
  });
});
