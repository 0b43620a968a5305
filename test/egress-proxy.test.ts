/**
 * `SLUICE_EGRESS_PROXY` (docs/operations.md "An egress proxy"), in the shape under test: Sluice
 * started with it sends every delivery through a small CONNECT proxy the test runs on
 * loopback, which sees every request go by; when the proxy refuses the tunnel, the attempts
 * fail as `proxy_failed` (the proxy's failure, not the receiver's) and nothing reaches the
 * receiver another way.
 */

import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { describe, it } from 'node:test';
import {
  createDestination,
  createTenant,
  getDelivery,
  harness,
  postEvent,
  waitUntil,
} from './helpers/sluice.ts';

interface Proxy {
  url: string;
  /** `host:port` of each CONNECT, in order. */
  tunnels: string[];
  /** Requests seen going through the tunnels (their request lines). */
  requests: string[];
  close(): Promise<void>;
}

/** A CONNECT proxy to loopback only; `refuse`: answers every CONNECT 403. */
async function startProxy(refuse = false): Promise<Proxy> {
  const tunnels: string[] = [];
  const requests: string[] = [];
  const sockets = new Set<Socket>();
  const server: Server = createServer((client) => {
    sockets.add(client);
    client.on('close', () => sockets.delete(client));
    client.on('error', () => undefined);
    client.once('data', (head: Buffer) => {
      const [line] = head.toString('latin1').split('\r\n');
      const m = /^CONNECT (127\.0\.0\.1):(\d+) HTTP\/1\.1$/.exec(line ?? '');
      if (!m || refuse) {
        client.end('HTTP/1.1 403 Forbidden\r\ncontent-length: 0\r\n\r\n');
        return;
      }
      tunnels.push(`${m[1]}:${m[2]}`);
      const upstream = connect(Number(m[2]), m[1] as string, () => {
        client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
        client.on('data', (chunk: Buffer) => {
          for (const l of chunk.toString('latin1').split('\r\n'))
            if (/^POST \S+ HTTP\/1\.1$/.test(l)) requests.push(l);
        });
        client.pipe(upstream).pipe(client);
      });
      sockets.add(upstream);
      upstream.on('close', () => sockets.delete(upstream));
      upstream.on('error', () => client.destroy());
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    tunnels,
    requests,
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

describe('the egress proxy', () => {
  it('every delivery goes through the proxy; the receiver gets them all', { timeout: 90_000 }, async (t) => {
    const proxy = await startProxy();
    t.after(() => proxy.close());
    const { box, rcv } = await harness(t, { SLUICE_EGRESS_PROXY: proxy.url });
    const tenant = await createTenant(box, box.adminToken);
    const dest = await createDestination(box, tenant.apiKey, {
      name: 'p',
      url: rcv.url('p'),
      rateLimit: { limit: 50, period: 'second' },
    });
    const ids: string[] = [];
    for (let n = 0; n < 20; n++)
      ids.push(
        (await postEvent(box, tenant.apiKey, { type: 'proxy.test', destinationId: dest.id, payload: { n } }))
          .id,
      );
    await waitUntil(
      () => ids.every((id) => rcv.deliveredIds(rcv.path('p')).has(id)),
      30_000,
      'the 20 events',
    );
    assert.ok(proxy.tunnels.length >= 1, 'tunnels opened');
    assert.ok(
      proxy.tunnels.every((to) => to === `127.0.0.1:${rcv.port}`),
      `the tunnels went to the receiver: ${proxy.tunnels.join(', ')}`,
    );
    assert.equal(
      proxy.requests.length,
      rcv.arrivals(rcv.path('p')).length,
      'the proxy saw every request the receiver got',
    );
    assert.ok(proxy.requests.every((l) => l === `POST ${rcv.path('p')} HTTP/1.1`));
  });

  it('an OAuth2 token request goes through the proxy too', { timeout: 60_000 }, async (t) => {
    const proxy = await startProxy();
    t.after(() => proxy.close());
    const { box, rcv } = await harness(t, { SLUICE_EGRESS_PROXY: proxy.url });
    const token = { access_token: 'at-proxied', token_type: 'Bearer', expires_in: 3_600 };
    await rcv.script(rcv.path('oauth/token'), [
      { status: 200, headers: { 'content-type': 'application/json' }, body: JSON.stringify(token) },
    ]);
    const tenant = await createTenant(box, box.adminToken);
    const dest = await createDestination(box, tenant.apiKey, {
      name: 'o',
      url: rcv.url('o'),
      rateLimit: { limit: 50, period: 'second' },
      auth: {
        type: 'oauth2_client_credentials',
        tokenUrl: rcv.url('oauth/token'),
        clientId: 'c',
        clientSecret: 's',
      },
    });
    const { id } = await postEvent(box, tenant.apiKey, {
      type: 'proxy.test',
      destinationId: dest.id,
      payload: {},
    });
    await waitUntil(() => rcv.deliveredIds(rcv.path('o')).has(id), 30_000, 'the event');
    assert.equal(rcv.arrivals(rcv.path('o'))[0]?.headers.authorization, 'Bearer at-proxied');
    assert.deepEqual(proxy.requests, [
      `POST ${rcv.path('oauth/token')} HTTP/1.1`,
      `POST ${rcv.path('o')} HTTP/1.1`,
    ]);
  });

  it('a proxy that refuses the tunnel: attempts fail as proxy_failed, the receiver sees nothing', {
    timeout: 90_000,
  }, async (t) => {
    const proxy = await startProxy(true);
    t.after(() => proxy.close());
    const { box, rcv } = await harness(t, { SLUICE_EGRESS_PROXY: proxy.url });
    const tenant = await createTenant(box, box.adminToken);
    const dest = await createDestination(box, tenant.apiKey, {
      name: 'r',
      url: rcv.url('r'),
      rateLimit: { limit: 10, period: 'second' },
      retry: { maxAttempts: 2, initialDelayMs: 100, maxDelayMs: 200 },
    });
    const event = await postEvent(box, tenant.apiKey, {
      type: 'proxy.test',
      destinationId: dest.id,
      payload: {},
    });
    const id = event.deliveries[0]!.id;
    const dead = await waitUntil(
      async () => {
        const d = await getDelivery(box, tenant.apiKey, id);
        return d.status === 'dead' ? d : undefined;
      },
      30_000,
      'the delivery dead',
    );
    assert.equal(dead.lastError, 'proxy_failed', 'the proxy failed the attempts, not the receiver');
    assert.equal(rcv.arrivals(rcv.path('r')).length, 0, 'nothing went around the proxy');
  });
});
