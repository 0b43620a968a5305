/**
 * Mutual TLS (docs/api.md "Mutual TLS"), in the shape under test, against an `https` receiver
 * on loopback that requires a client certificate signed by a CA the test makes with openssl
 * (its own certificate is signed by that CA too, so only `tls.ca` makes it trusted):
 *
 * - without `tls`, every attempt fails (the receiver's certificate is not trusted), and with
 *   the CA alone too (the receiver wants a client certificate): nothing reaches it;
 * - with the client certificate, its key and the CA, every event arrives, and the receiver
 *   sees the client's certificate;
 * - the key is in no answer and not in the clear in the store.
 */

import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import type { TLSSocket } from 'node:tls';
import { startTestPki, type TestPki } from '@sluice/testing';
import { fileBox } from './helpers/client.ts';
import { waitUntil } from './helpers/sluice.ts';

const get = fileBox();

describe('mutual TLS', () => {
  let pki: TestPki;
  let server: Server;
  let origin = '';
  /** Requests that got through the handshake: their path, event id and the client's CN. */
  const seen: { path: string; id: string; client: string }[] = [];

  before(async () => {
    pki = startTestPki('Receiver Test CA');
    const own = pki.issue('127.0.0.1', { server: true });
    server = createServer(
      { cert: own.cert, key: own.key, ca: pki.ca.cert, requestCert: true, rejectUnauthorized: true },
      (req, res) => {
        req.resume();
        req.on('end', () => {
          const peer = (req.socket as TLSSocket).getPeerCertificate();
          seen.push({
            path: req.url ?? '',
            id: String(req.headers['webhook-id']),
            client: String(peer.subject?.CN),
          });
          res.end('ok');
        });
      },
    );
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    origin = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
    pki.close();
  });

  const failedAttempts = async (
    api: Awaited<ReturnType<ReturnType<typeof get>['tenant']>>['api'],
    eventId: string,
  ) => {
    const [listed] = (await api.deliveries.list({ eventId })).data;
    return waitUntil(
      async () => {
        const d = await api.deliveries.get(listed!.id);
        return d.attempts.length >= 2 ? d.attempts : undefined;
      },
      20_000,
      'two failed attempts',
    );
  };

  it('without tls, or with the CA alone, every attempt fails and nothing reaches the receiver', async () => {
    const { api } = await get().tenant('no-tls');
    const retry = { maxAttempts: 3, initialDelayMs: 100, maxDelayMs: 200 };
    const bare = await api.destinations.create({
      url: `${origin}/bare`,
      rateLimit: { limit: 50, period: 'second' },
      retry,
    });
    const caOnly = await api.destinations.create({
      url: `${origin}/ca-only`,
      rateLimit: { limit: 50, period: 'second' },
      retry,
      tls: { ca: pki.ca.cert },
    });
    const one = await api.events.send({ type: 'tls.test', payload: {}, destinationId: bare.id });
    const two = await api.events.send({ type: 'tls.test', payload: {}, destinationId: caOnly.id });
    const untrusted = await failedAttempts(api, one.id);
    assert.ok(untrusted.every((a) => a.statusCode === null && a.errorCode !== null));
    assert.match(
      untrusted[0]?.errorCode ?? '',
      /CERT|SIGNATURE|ISSUER|SELF_SIGNED/,
      'the receiver is not trusted',
    );
    const noClient = await failedAttempts(api, two.id);
    assert.ok(
      noClient.every((a) => a.statusCode === null && a.errorCode !== null),
      JSON.stringify(noClient[0]),
    );
    assert.equal(seen.filter((s) => s.path === '/bare' || s.path === '/ca-only').length, 0);
  });

  it('with the client certificate, its key and the CA, every event arrives', async () => {
    const { api } = await get().tenant('tls');
    const client = pki.issue('sluice-client');
    const d = await api.destinations.create({
      url: `${origin}/hook`,
      rateLimit: { limit: 100, period: 'second' },
      tls: { clientCertificate: client.cert, clientKey: client.key, ca: pki.ca.cert },
    });
    assert.equal(d.tls?.clientCertificate?.subject, 'CN=sluice-client');
    const ids = await Promise.all(
      Array.from(
        { length: 20 },
        async (_, n) => (await api.events.send({ type: 'tls.test', payload: { n }, destinationId: d.id })).id,
      ),
    );
    await waitUntil(
      async () => ids.every((id) => seen.some((s) => s.path === '/hook' && s.id === id)),
      30_000,
      'the 20 events',
    );
    assert.ok(seen.filter((s) => s.path === '/hook').every((s) => s.client === 'sluice-client'));

    const box = get();
    const body = JSON.stringify(await box.admin.destinations.list({ limit: 500 }));
    assert.ok(!body.includes('PRIVATE KEY'), 'no answer holds a key');
    const rows = await box.query<{ tls: unknown }>('SELECT tls FROM destinations WHERE tls IS NOT NULL');
    const column = JSON.stringify(rows);
    assert.match(column, /enc:v1:/);
    assert.ok(!column.includes('PRIVATE KEY') && !column.includes(client.key.split('\n')[1] ?? '?'));
  });

  it('a client certificate near its end: flagged in the health and told to the tenant once', async () => {
    const box = get();
    const { api } = await box.tenant('expiring');
    await api.destinations.create({
      url: box.rcv.url('ops'),
      rateLimit: { limit: 10, period: 'second' },
      eventTypes: ['sluice.destination.certificate_expiring'],
    });
    const soon = pki.issue('ending-soon', { days: 5 });
    const d = await api.destinations.create({
      url: `${origin}/soon`,
      rateLimit: { limit: 10, period: 'second' },
      tls: { clientCertificate: soon.cert, clientKey: soon.key, ca: pki.ca.cert },
    });
    assert.equal(d.health.certificateExpiresAt, d.tls?.clientCertificate?.notAfter);
    await box.rcv.waitFor(
      () => box.rcv.arrivals(box.rcv.path('ops')).some((a) => a.complete),
      20_000,
      'the event',
    );
    // The same certificate again (a PATCH that gives it anew): no second event.
    await api.destinations.update(d.id, {
      tls: { clientCertificate: soon.cert, clientKey: soon.key, ca: pki.ca.cert },
    });
    await new Promise((r) => setTimeout(r, 1_000));
    const got = box.rcv.arrivals(box.rcv.path('ops')).map(
      (a) =>
        JSON.parse(a.body) as {
          type: string;
          destinationId: string;
          data: { subject: string; daysLeft: number };
        },
    );
    assert.equal(got.length, 1, 'told once');
    assert.equal(got[0]?.type, 'sluice.destination.certificate_expiring');
    assert.equal(got[0]?.destinationId, d.id);
    assert.deepEqual(Object.keys(got[0]?.data ?? {}).sort(), [
      'daysLeft',
      'fingerprint256',
      'notAfter',
      'subject',
    ]);
    assert.equal(got[0]?.data.subject, 'CN=ending-soon');
    assert.ok(got[0]?.data.daysLeft >= 4 && got[0]?.data.daysLeft <= 5);
  });
});
