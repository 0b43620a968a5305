/**
 * OAuth2 client credentials (docs/api.md "OAuth2 client credentials"), in the shape under
 * test, against a token endpoint and a receiver on loopback: the receiver answers `401`
 * unless a request carries a bearer token the endpoint issued and has not revoked.
 *
 * - many deliveries, one token request: the token is cached and sent as `authorization: Bearer`;
 * - a `401` from the receiver drops the token: the retry gets a new one;
 * - a token endpoint that refuses the client fails the attempts `auth_failed` with its status,
 *   asks it again only after a few seconds, sends the receiver nothing, and never opens the
 *   breaker;
 * - neither the client secret nor a token is in an answer or in the clear in the store.
 */

import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { fileBox } from './helpers/client.ts';
import { SHAPE } from './helpers/shape.ts';
import { spawnService, waitUntil } from './helpers/sluice.ts';

const get = fileBox();

type Api = Awaited<ReturnType<ReturnType<typeof get>['tenant']>>['api'];

/** The delivery once the record says `status` (its outcome is written a moment after the answer). */
const settled = (api: Api, id: string, status: string, ms: number, what: string) =>
  waitUntil(
    async () => {
      const now = await api.deliveries.get(id);
      return now.status === status ? now : undefined;
    },
    ms,
    what,
  );

const CLIENT = { id: 'sluice-client', secret: 'cs-8Hq-secret' };

describe('OAuth2 client credentials', () => {
  let server: Server;
  let origin = '';
  /** Token requests, in order, with what the endpoint read of them. */
  const asked: { client: string; form: Record<string, string> }[] = [];
  /** Tokens the endpoint issued and the receiver accepts. */
  const valid = new Set<string>();
  const issued: string[] = [];
  /** Requests the receiver got, by path, with the authorization they carried and the answer. */
  const seen: { path: string; authorization: string | undefined; id: string; status: number }[] = [];
  /** The lifetime of the tokens issued (s), and whether the endpoint answers 500 for now. */
  let ttl = 3_600;
  let failing = false;
  /** When each issued token expires (ms): the receiver refuses it after. */
  const expires = new Map<string, number>();

  before(async () => {
    server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const body = Buffer.concat(chunks).toString();
        if (req.url === '/oauth/token') {
          const basic = /^Basic (.+)$/.exec(req.headers.authorization ?? '')?.[1] ?? '';
          const client = Buffer.from(basic, 'base64').toString();
          asked.push({ client, form: Object.fromEntries(new URLSearchParams(body)) });
          if (failing) {
            res.writeHead(500).end('down for maintenance');
            return;
          }
          if (client !== `${CLIENT.id}:${CLIENT.secret}`) {
            res.writeHead(401, { 'content-type': 'application/json' });
            res.end(JSON.stringify({ error: 'invalid_client' }));
            return;
          }
          const token = `at-${issued.length + 1}-secret`;
          issued.push(token);
          valid.add(token);
          expires.set(token, Date.now() + ttl * 1_000);
          res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'no-store' });
          res.end(JSON.stringify({ access_token: token, token_type: 'Bearer', expires_in: ttl }));
          return;
        }
        const authorization = req.headers.authorization;
        const given = /^Bearer (.+)$/.exec(authorization ?? '')?.[1] ?? '';
        const ok = valid.has(given) && (expires.get(given) ?? 0) > Date.now();
        const status = ok ? 200 : 401;
        seen.push({ path: req.url ?? '', authorization, id: String(req.headers['webhook-id']), status });
        res.writeHead(status).end(ok ? 'ok' : 'invalid token');
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(() => new Promise<void>((resolve) => server.close(() => resolve())));

  const credential = (secret = CLIENT.secret) => ({
    type: 'oauth2_client_credentials' as const,
    tokenUrl: `${origin}/oauth/token`,
    clientId: CLIENT.id,
    clientSecret: secret,
    scope: 'webhooks',
  });
  const delivered = (path: string) =>
    new Set(seen.filter((s) => s.path === path && s.status === 200).map((s) => s.id));

  it('many deliveries, one token request; the token goes as a bearer token', async () => {
    const { api } = await get().tenant('oauth');
    const d = await api.destinations.create({
      url: `${origin}/hook`,
      rateLimit: { limit: 100, period: 'second' },
      auth: credential(),
    });
    assert.deepEqual(d.auth, {
      type: 'oauth2_client_credentials',
      tokenUrl: `${origin}/oauth/token`,
      clientId: CLIENT.id,
      scope: 'webhooks',
    });
    const ids = await Promise.all(
      Array.from(
        { length: 40 },
        async (_, n) =>
          (await api.events.send({ type: 'oauth.test', payload: { n }, destinationId: d.id })).id,
      ),
    );
    await waitUntil(async () => ids.every((id) => delivered('/hook').has(id)), 30_000, 'the 40 events');
    assert.equal(asked.length, 1, `token requests: ${asked.length}`);
    assert.deepEqual(asked[0]?.form, { grant_type: 'client_credentials', scope: 'webhooks' });
    assert.ok(seen.filter((s) => s.path === '/hook').every((s) => s.authorization === `Bearer ${issued[0]}`));
  });

  it('a 401 from the receiver drops the token: the retry carries a new one', async () => {
    const { api } = await get().tenant('revoked');
    const d = await api.destinations.create({
      url: `${origin}/revoked`,
      rateLimit: { limit: 100, period: 'second' },
      auth: credential(),
      retry: { maxAttempts: 10, initialDelayMs: 100, maxDelayMs: 500 },
    });
    const { id: first } = await api.events.send({ type: 'oauth.test', payload: {}, destinationId: d.id });
    await waitUntil(async () => delivered('/revoked').has(first), 20_000, 'the first event');
    const before = asked.length;
    for (const token of valid) valid.delete(token); // the authorization server revokes them all
    const { id } = await api.events.send({ type: 'oauth.test', payload: {}, destinationId: d.id });
    await waitUntil(async () => delivered('/revoked').has(id), 20_000, 'the event, with a new token');
    assert.equal(asked.length, before + 1, 'one new token request');
    const [delivery] = (await api.deliveries.list({ eventId: id })).data;
    const recorded = await settled(api, delivery!.id, 'delivered', 10_000, 'the delivery recorded delivered');
    const attempts = recorded.attempts.map((a) => a.statusCode);
    assert.deepEqual(attempts, [401, 200]);
  });

  it('a token endpoint that refuses the client: auth_failed with its status, the receiver sent nothing, the breaker closed', async () => {
    const { api } = await get().tenant('refused');
    const d = await api.destinations.create({
      url: `${origin}/refused`,
      rateLimit: { limit: 100, period: 'second' },
      auth: credential('the-wrong-secret'),
      retry: { maxAttempts: 12, initialDelayMs: 20, maxDelayMs: 200 },
    });
    const before = asked.length;
    const { id } = await api.events.send({ type: 'oauth.test', payload: {}, destinationId: d.id });
    const [listed] = (await api.deliveries.list({ eventId: id })).data;
    const dead = await settled(api, listed!.id, 'dead', 30_000, 'the delivery dead after its 12 attempts');
    assert.equal(dead.attempts.length, 12);
    for (const a of dead.attempts) {
      assert.equal(a.errorCode, 'auth_failed');
      assert.equal(a.statusCode, null);
      assert.match(a.error ?? '', /token endpoint answered 401: invalid_client/);
    }
    // 12 attempts in about 2 s: a failed request holds new ones back for a few seconds.
    assert.ok(asked.length - before <= 2, `token requests: ${asked.length - before}`);
    assert.equal(seen.filter((s) => s.path === '/refused').length, 0, 'nothing sent to the receiver');
    const health = (await api.destinations.get(d.id)).health;
    assert.equal(health.state, 'healthy', 'the token endpoint is not the receiver');
  });

  it('neither the client secret nor a token in any answer, nor in the clear in the store', async () => {
    const box = get();
    const secrets = [CLIENT.secret, 'the-wrong-secret', ...issued];
    const body = JSON.stringify(await box.admin.destinations.list({ limit: 500 }));
    for (const s of secrets) assert.ok(!body.includes(s), `an answer holds ${s}`);
    const rows = await box.query<{ auth: unknown }>('SELECT auth FROM destinations WHERE auth IS NOT NULL');
    const column = JSON.stringify(rows);
    assert.match(column, /oauth2_client_credentials/);
    for (const s of secrets) assert.ok(!column.includes(s), `the auth column holds ${s}`);
  });

  it('tokens that expire in 2 s: 300 deliveries over 6 s take a handful, shared by two workers in the distributed shape', async (t) => {
    const box = get();
    if (SHAPE === 'distributed') {
      // A second delivery worker on the same state: the token in Redis serves both.
      const worker = await spawnService('services/delivery-worker/src/main.ts', {
        ...box.childEnv(),
        PORT: '0',
      });
      t.after(() => worker.stop());
    }
    ttl = 2;
    t.after(() => {
      ttl = 3_600;
    });
    const { api } = await box.tenant('short-lived');
    const d = await api.destinations.create({
      url: `${origin}/short`,
      rateLimit: { limit: 100, period: 'second' },
      auth: credential(),
      retry: { maxAttempts: 10, initialDelayMs: 100, maxDelayMs: 500 },
    });
    const before = asked.length;
    const ids: string[] = [];
    for (let n = 0; n < 300; n++) {
      ids.push((await api.events.send({ type: 'oauth.test', payload: { n }, destinationId: d.id })).id);
      if (n % 10 === 9) await new Promise((r) => setTimeout(r, 200));
    }
    await waitUntil(async () => ids.every((id) => delivered('/short').has(id)), 60_000, 'the 300 events');
    const tokens = asked.length - before;
    assert.ok(
      tokens >= 2 && tokens <= 12,
      `token requests for 300 deliveries over ~6 s of 2 s tokens: ${tokens}`,
    );
    const refused = seen.filter((s) => s.path === '/short' && s.status === 401).length;
    t.diagnostic(`${tokens} token requests for 300 deliveries, ${refused} refused with an expired token`);
    assert.ok(refused <= 3, `requests with an expired token: ${refused}`);
  });

  it('a token endpoint down for a while, then back: nothing is lost', async () => {
    const { api } = await get().tenant('outage');
    const d = await api.destinations.create({
      url: `${origin}/outage`,
      rateLimit: { limit: 100, period: 'second' },
      auth: credential(),
      retry: { maxAttempts: 20, initialDelayMs: 200, maxDelayMs: 1_000 },
    });
    failing = true;
    const ids: string[] = [];
    for (let n = 0; n < 20; n++)
      ids.push((await api.events.send({ type: 'oauth.test', payload: { n }, destinationId: d.id })).id);
    const [listed] = (await api.deliveries.list({ eventId: ids[0]! })).data;
    await waitUntil(
      async () => (await api.deliveries.get(listed!.id)).attempts.some((a) => a.errorCode === 'auth_failed'),
      20_000,
      'an attempt failed auth_failed',
    );
    await new Promise((r) => setTimeout(r, 2_000));
    failing = false;
    await waitUntil(async () => ids.every((id) => delivered('/outage').has(id)), 60_000, 'the 20 events');
    // The outcome is written a moment after the receiver answered.
    const { attempts } = await settled(
      api,
      listed!.id,
      'delivered',
      10_000,
      'the first delivery recorded delivered',
    );
    assert.match(attempts[0]?.error ?? '', /token endpoint answered 500/);
    assert.equal(attempts.at(-1)?.statusCode, 200);
    assert.equal((await api.destinations.get(d.id)).health.state, 'healthy');
  });
});
