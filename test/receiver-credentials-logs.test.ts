/**
 * A credential's secret never reaches the logs: `npm start`'s process (on SQLite, or on
 * Postgres and Redis in the distributed shape) at `SLUICE_LOG_LEVEL=trace` creates destinations
 * with every kind of credential (OAuth2's token endpoint on the receiver too) and a client key,
 * delivers to a receiver that refuses the first attempts (401)
 * and accepts once a PATCH puts the right token in, and a bad PATCH is refused; none of the
 * secrets is in a line it wrote, on stdout or stderr.
 */

import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, it } from 'node:test';
import { startTestPki } from '@sluice/testing';
import { assertNoLeaks } from './helpers/leaks.ts';
import { childState } from './helpers/shape.ts';
import { freePort, randomToken, spawnService, waitUntil } from './helpers/sluice.ts';

const SECRETS = [
  'tok-log-wrong-5Rt',
  'tok-log-right-8Qw',
  'pw-log-3Zp',
  'key-log-6Yh',
  'cs-log-4Mn',
  'at-log-9Kd',
];

describe('credentials and the logs', () => {
  it('no secret in any log line, at trace level, through refusals, retries and a bad PATCH', {
    timeout: 120_000,
  }, async (t) => {
    let accepted = 0;
    let refused = 0;
    let oauthAccepted = 0;
    const pki = startTestPki();
    const identity = pki.issue('log-client');
    // A line of the key's base64: the key in a log would show it.
    const keyLine = identity.key.split('\n')[1] ?? 'none';
    const receiver = createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        if (req.url === '/oauth/token') {
          const basic = `Basic ${Buffer.from(`client:${SECRETS[4]}`).toString('base64')}`;
          if (req.headers.authorization !== basic)
            return void res.writeHead(401).end('{"error":"invalid_client"}');
          res.writeHead(200, { 'content-type': 'application/json' });
          return void res.end(
            JSON.stringify({ access_token: SECRETS[5], token_type: 'Bearer', expires_in: 3_600 }),
          );
        }
        if (req.url === '/oauth-hook') {
          const ok = req.headers.authorization === `Bearer ${SECRETS[5]}`;
          if (ok) oauthAccepted++;
          return void res.writeHead(ok ? 200 : 401).end();
        }
        const ok = req.headers.authorization === `Bearer ${SECRETS[1]}`;
        if (ok) accepted++;
        else refused++;
        res.writeHead(ok ? 200 : 401).end(ok ? 'ok' : 'no');
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    // What this test starts is let go of also when a step fails before the end (a child that
    // did not start once left the receiver listening, and the file's process never ended).
    let state: Awaited<ReturnType<typeof childState>> | undefined;
    let letGone = false;
    const letGo = async () => {
      if (letGone) return;
      letGone = true;
      receiver.closeAllConnections();
      await new Promise<void>((resolve) => receiver.close(() => resolve()));
      await state?.close();
      pki.close();
    };
    t.after(letGo);
    const origin = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
    state = await childState();
    const port = await freePort();
    const adminToken = randomToken();
    const lines: string[] = [];
    const child = await spawnService(
      'services/single/src/main.ts',
      { ...state.env, PORT: String(port), SLUICE_ADMIN_TOKEN: adminToken, SLUICE_LOG_LEVEL: 'trace' },
      (line) => lines.push(line),
    );
    try {
      const base = `http://127.0.0.1:${port}`;
      const call = async (method: string, path: string, token: string, body?: unknown) => {
        const res = await fetch(base + path, {
          method,
          headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
          ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        });
        return { status: res.status, json: (await res.json()) as Record<string, unknown> };
      };
      const tenant = await call('POST', '/v1/tenants', adminToken, { name: 'logs' });
      const key = tenant.json.apiKey as string;
      const retry = { maxAttempts: 20, initialDelayMs: 200, maxDelayMs: 500 };
      const rateLimit = { limit: 20, period: 'second' };
      const bearer = await call('POST', '/v1/destinations', key, {
        url: `${origin}/bearer`,
        rateLimit,
        retry,
        auth: { type: 'bearer', token: SECRETS[0] },
      });
      assert.equal(bearer.status, 201);
      for (const auth of [
        { type: 'basic', username: 'acme', password: SECRETS[2] },
        { type: 'header', name: 'x-api-key', value: SECRETS[3] },
      ])
        assert.equal(
          (await call('POST', '/v1/destinations', key, { url: `${origin}/other`, rateLimit, auth })).status,
          201,
        );
      const oauth = await call('POST', '/v1/destinations', key, {
        url: `${origin}/oauth-hook`,
        rateLimit,
        retry,
        auth: {
          type: 'oauth2_client_credentials',
          tokenUrl: `${origin}/oauth/token`,
          clientId: 'client',
          clientSecret: SECRETS[4],
        },
      });
      assert.equal(oauth.status, 201);
      const tls = await call('POST', '/v1/destinations', key, {
        url: 'https://127.0.0.1:9/tls',
        rateLimit,
        tls: { clientCertificate: identity.cert, clientKey: identity.key },
      });
      assert.equal(tls.status, 201, JSON.stringify(tls.json));
      for (let n = 0; n < 2; n++)
        await call('POST', '/v1/events', key, {
          type: 'log.test',
          payload: { n },
          destinationId: oauth.json.id,
        });
      const id = bearer.json.id as string;
      for (let n = 0; n < 3; n++)
        assert.equal(
          (await call('POST', '/v1/events', key, { type: 'log.test', payload: { n }, destinationId: id }))
            .status,
          202,
        );
      await waitUntil(() => refused >= 3, 30_000, 'the attempts with the wrong token refused');
      const bad = await call('PATCH', `/v1/destinations/${id}`, key, {
        auth: { type: 'bearer', token: SECRETS[1] },
        headers: { Authorization: SECRETS[1] },
      });
      assert.equal(bad.status, 400, 'authorization beside auth');
      const good = await call('PATCH', `/v1/destinations/${id}`, key, {
        auth: { type: 'bearer', token: SECRETS[1] },
      });
      assert.equal(good.status, 200);
      await waitUntil(() => accepted >= 3, 30_000, 'the 3 events accepted with the right token');
      await waitUntil(() => oauthAccepted >= 2, 30_000, 'the 2 events with the OAuth2 token');
    } finally {
      await child.stop();
      await letGo();
    }
    const all = [...lines, ...child.logs].join('\n');
    assert.ok(lines.length >= 5, `the process wrote ${lines.length} lines`);
    for (const secret of [...SECRETS, keyLine])
      assert.ok(!all.includes(secret), `a log line holds ${secret}`);
    await assertNoLeaks();
  });
});
