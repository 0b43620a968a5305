/**
 * The SSRF guard's address rule (ssrf.ts): only public unicast addresses pass, in every form an
 * address can be written — IPv4, IPv4-mapped and IPv4-compatible IPv6, link-local, unique-local
 * — and a hostname resolving to a forbidden one is refused in `lookup`, before any connection
 * (an injected resolver: nothing here connects anywhere).
 */

import assert from 'node:assert/strict';
import type { LookupAddress } from 'node:dns';
import { type AddressInfo, createServer as createNetServer } from 'node:net';
import { describe, it } from 'node:test';
import { Deliverer } from './deliver.ts';
import { checkUrlHost, guardedLookup, isForbiddenAddress, type LookupFunction } from './ssrf.ts';

describe('SSRF guard', () => {
  it('refuses every address that is not public unicast, however it is written', () => {
    for (const address of [
      '127.0.0.1',
      '10.0.0.1',
      '172.16.0.1',
      '192.168.1.1',
      '169.254.169.254',
      '100.64.0.1',
      '0.0.0.0',
      '224.0.0.1',
      '::1',
      '::',
      '::ffff:127.0.0.1',
      '::ffff:169.254.169.254',
      '::169.254.169.254',
      '::10.0.0.1',
      '::8.8.8.8',
      'fe80::1',
      'fc00::1',
      'fd12:3456::1',
      'ff02::1',
      '64:ff9b::a9fe:a9fe',
      '2002:a9fe:a9fe::1',
      'not an address',
    ])
      assert.equal(isForbiddenAddress(address), true, address);
    for (const address of [
      '8.8.8.8',
      '1.1.1.1',
      '::ffff:8.8.8.8',
      '2606:4700:4700::1111',
      '2a00:1450:4001::200e',
    ])
      assert.equal(isForbiddenAddress(address), false, address);
  });

  it('refuses such a literal in a URL at once', () => {
    for (const url of [
      'http://[::169.254.169.254]/',
      'http://[::ffff:10.0.0.1]/',
      'http://[fe80::1]/',
      'http://localhost/',
    ])
      assert.ok(checkUrlHost(new URL(url), false), url);
    assert.equal(checkUrlHost(new URL('http://[2606:4700:4700::1111]/'), false), undefined);
    assert.equal(checkUrlHost(new URL('http://[::1]/'), true), undefined, 'private networks allowed');
  });

  it('a hostname resolving to ::169.254.169.254 is refused in lookup, before any connection', async () => {
    const resolver: LookupFunction = (_hostname, _options, callback) =>
      process.nextTick(() =>
        callback(null, [{ address: '::169.254.169.254', family: 6 }] as LookupAddress[]),
      );
    const err = await new Promise<NodeJS.ErrnoException | null>((resolve) =>
      guardedLookup(false, resolver)('metadata.example.test', { all: true }, (e) => resolve(e)),
    );
    assert.equal(err?.code, 'destination_not_allowed');
    assert.match(String(err?.message), /::169\.254\.169\.254/);
  });
});

describe('SSRF guard with an egress proxy', () => {
  it('the host is resolved and refused before the proxy is asked; the proxy on loopback is exempt', async () => {
    const asked: string[] = [];
    const proxy = createNetServer((socket) => {
      socket.on('error', () => undefined);
      socket.once('data', (head: Buffer) => {
        asked.push(head.toString('latin1').split('\r\n')[0] ?? '');
        // Never connects anywhere: a tunnel refused.
        socket.end('HTTP/1.1 403 Forbidden\r\ncontent-length: 0\r\n\r\n');
      });
    });
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    const resolver: LookupFunction = (hostname, _options, callback) =>
      process.nextTick(() =>
        callback(null, [
          { address: hostname === 'metadata.example.test' ? '169.254.169.254' : '93.184.216.34', family: 4 },
        ] as LookupAddress[]),
      );
    const deliverer = new Deliverer({
      allowPrivateNetworks: false,
      lookup: resolver,
      proxy: `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`,
    });
    const attempt = (url: string) =>
      deliverer.attempt(
        {
          url,
          eventId: 'evt_01hzproxyguard',
          eventType: 'order.created',
          body: '{}',
          sequence: 1,
          attempt: 1,
          secrets: ['whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw'],
          timeoutMs: 5_000,
        },
        1,
      );
    try {
      const refused = await attempt('http://metadata.example.test/latest/meta-data');
      assert.equal(refused.result.kind === 'error' && refused.result.code, 'destination_not_allowed');
      assert.deepEqual(asked, [], 'the proxy was never asked');
      const proxied = await attempt('http://hook.example.test/in');
      assert.equal(proxied.result.kind === 'error' && proxied.result.code, 'proxy_failed');
      assert.deepEqual(asked, ['CONNECT hook.example.test:80 HTTP/1.1'], 'a public host goes to the proxy');
    } finally {
      await deliverer.close();
      await new Promise((resolve) => proxy.close(resolve));
    }
  });
});
