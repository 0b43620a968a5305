/**
 * A destination's `tls` through `app.inject`: kept and shown as its certificates' subject,
 * issuer, end and fingerprint (never the key), flagged in the health within 14 days of its
 * end, and every bad value refused at its path with nothing changed.
 */

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Destination } from '@sluice/client';
import { startTestPki, type TestPki } from '@sluice/testing';
import { assertError, DESTINATION, type TestApi, testApi } from '../test-app.ts';

const DAY = 86_400_000;

describe('/v1/destinations: tls', () => {
  let api: TestApi;
  let key: string;
  let pki: TestPki;

  before(async () => {
    api = await testApi();
    ({ key } = await api.tenant());
    pki = startTestPki('Acme Test CA');
  });
  after(async () => {
    await api.close();
    pki.close();
  });

  const call = (method: 'GET' | 'POST' | 'PATCH', url: string, body?: unknown) =>
    api.inject(method, url, { token: key, body });
  const https = { ...DESTINATION, url: 'https://hooks.example.com/tls' };

  it('keeps a client certificate, its key and a CA, and shows the certificates, never the key', async () => {
    const client = pki.issue('sluice-client');
    const res = await call('POST', '/v1/destinations', {
      ...https,
      tls: { clientCertificate: client.cert, clientKey: client.key, ca: pki.ca.cert },
    });
    assert.equal(res.statusCode, 201, res.body);
    const d = res.json<Destination>();
    assert.equal(d.tls?.clientCertificate?.subject, 'CN=sluice-client');
    assert.equal(d.tls?.clientCertificate?.issuer, 'CN=Acme Test CA');
    assert.match(d.tls?.clientCertificate?.fingerprint256 ?? '', /^([0-9A-F]{2}:){31}[0-9A-F]{2}$/);
    assert.ok(Date.parse(d.tls?.clientCertificate?.notAfter ?? '') > Date.now() + 29 * DAY);
    assert.equal(d.tls?.ca?.subject, 'CN=Acme Test CA');
    assert.equal(d.health.certificateExpiresAt, null, 'thirty days left: not flagged');
    const secretPart = client.key.split('\n')[1] ?? '';
    for (const r of [
      res,
      await call('GET', `/v1/destinations/${d.id}`),
      await call('GET', '/v1/destinations'),
    ])
      assert.ok(!r.body.includes(secretPart) && !r.body.includes('PRIVATE KEY'), 'no answer holds the key');
    const cleared = await call('PATCH', `/v1/destinations/${d.id}`, { tls: null });
    assert.equal(cleared.json<Destination>().tls, null);
  });

  it('flags a client certificate within 14 days of its end in the health', async () => {
    const soon = pki.issue('ending-soon', { days: 7 });
    const res = await call('POST', '/v1/destinations', {
      ...https,
      tls: { clientCertificate: soon.cert, clientKey: soon.key },
    });
    const d = res.json<Destination>();
    assert.equal(d.health.certificateExpiresAt, d.tls?.clientCertificate?.notAfter);
    const health = await call('GET', `/v1/destinations/${d.id}/health`);
    assert.equal(
      health.json<{ certificateExpiresAt: string }>().certificateExpiresAt,
      d.tls?.clientCertificate?.notAfter,
    );
  });

  it('refuses each bad value at its path, all at once, and changes nothing', async () => {
    const a = pki.issue('a');
    const b = pki.issue('b');
    const bad: [unknown, string[]][] = [
      [{ clientCertificate: a.cert, clientKey: b.key }, ['tls.clientKey']],
      [{ clientCertificate: 'not pem', clientKey: a.key }, ['tls.clientCertificate']],
      [{ clientCertificate: a.cert }, ['tls.clientKey']],
      [{ clientKey: a.key }, ['tls.clientCertificate']],
      [{ clientCertificate: a.cert, clientKey: a.cert }, ['tls.clientKey']],
      [{ ca: '-----BEGIN CERTIFICATE-----\nnope\n-----END CERTIFICATE-----' }, ['tls.ca']],
      [{}, ['tls.clientCertificate']],
      [{ clientCertificate: a.cert, clientKey: a.key, extra: 1 }, ['tls.extra']],
    ];
    for (const [tls, paths] of bad) {
      const res = await call('POST', '/v1/destinations', { ...https, tls });
      assertError(res, 400, 'validation_failed');
      const got = res.json<{ error: { details: { path: string }[] } }>().error.details.map((d) => d.path);
      for (const path of paths) assert.ok(got.includes(path), `${JSON.stringify(tls).slice(0, 60)}: ${got}`);
    }
    // tls needs https, on create and when a PATCH moves the URL.
    const plain = await call('POST', '/v1/destinations', {
      ...DESTINATION,
      url: 'http://hooks.example.com/plain',
      tls: { ca: pki.ca.cert },
    });
    assertError(plain, 400, 'validation_failed', 'tls');
    const d = (
      await call('POST', '/v1/destinations', { ...https, tls: { ca: pki.ca.cert } })
    ).json<Destination>();
    assertError(
      await call('PATCH', `/v1/destinations/${d.id}`, { url: 'http://hooks.example.com/x' }),
      400,
      'validation_failed',
      'tls',
    );
    assert.equal((await call('GET', `/v1/destinations/${d.id}`)).json<Destination>().url, https.url);
  });

  it('refuses an expired client certificate', async () => {
    const later = await testApi({}, { clock: () => Date.now() + 40 * DAY });
    try {
      const { key: tenantKey } = await later.tenant();
      const a = pki.issue('expired-by-then');
      const res = await later.inject('POST', '/v1/destinations', {
        token: tenantKey,
        body: { ...https, tls: { clientCertificate: a.cert, clientKey: a.key } },
      });
      assertError(res, 400, 'validation_failed', 'tls.clientCertificate');
      assert.match(res.json<{ error: { message: string } }>().error.message, /expired on/);
    } finally {
      await later.close();
    }
  });
});
