/**
 * The attempt's deadline (deliver.ts): `timeoutMs` bounds the whole attempt — connecting, the
 * TLS handshake, headers and body — not only the gaps between chunks, and a fast attempt
 * leaves no timer of its own armed. Against real servers on loopback.
 */

import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { type AddressInfo, createServer as createNetServer, type Server as NetServer } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { Deliverer, type DeliveryRequest } from './deliver.ts';

/** One attempt of a test event to `url`. */
const requestTo = (url: string, timeoutMs: number): DeliveryRequest => ({
  url,
  eventId: 'evt_01hzdeadline',
  eventType: 'order.created',
  body: '{}',
  sequence: 1,
  attempt: 1,
  secrets: ['whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw'],
  timeoutMs,
});

describe('Deliverer deadline', () => {
  let server: Server;
  let base: string;
  /** When the receiver saw the trickling response's connection close, and how much it had sent. */
  let trickle = { closedAt: 0, sent: 0 };
  const deliverer = new Deliverer({ allowPrivateNetworks: true, connections: 4 });

  before(async () => {
    server = createServer((req, res) => {
      req.resume();
      if (req.url === '/ok') {
        res.end('ok');
        return;
      }
      // Headers at once, then a byte every 100 ms for 3 s: no gap reaches the deadline.
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.on('close', () => {
        trickle.closedAt = Date.now();
      });
      const tick = setInterval(() => {
        if (res.destroyed || trickle.sent >= 30) {
          clearInterval(tick);
          res.end();
          return;
        }
        trickle.sent++;
        res.write('x');
      }, 100);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(async () => {
    await deliverer.close();
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  const request = (path: string, timeoutMs: number) => requestTo(`${base}${path}`, timeoutMs);

  it('a body that trickles past timeoutMs fails as a timeout, at the deadline', async () => {
    trickle = { closedAt: 0, sent: 0 };
    const started = Date.now();
    const report = await deliverer.attempt(request('/trickle', 400), Math.floor(started / 1_000));
    const took = Date.now() - started;
    assert.equal(report.result.kind, 'error');
    assert.equal(report.result.kind === 'error' && report.result.code, 'timeout');
    assert.ok(took < 2_500, `ended at the deadline, not with the body (${took} ms)`);
    for (let i = 0; i < 100 && trickle.closedAt === 0; i++) await new Promise((r) => setTimeout(r, 20));
    assert.ok(trickle.closedAt > 0, 'the receiver saw the connection closed');
    assert.ok(trickle.sent < 30, `closed before the body was all sent (${trickle.sent} of 30 bytes)`);
  });

  it('a token request (post) answers with its body, and ends at its deadline like an attempt', async () => {
    const ok = await deliverer.post(
      `${base}/ok`,
      { 'content-type': 'application/x-www-form-urlencoded' },
      'a=1',
      1_000,
    );
    assert.deepEqual(ok, { statusCode: 200, body: 'ok' });
    const started = Date.now();
    const slow = await deliverer.post(`${base}/trickle`, {}, '', 400);
    assert.equal('error' in slow && slow.error.code, 'timeout');
    assert.ok(Date.now() - started < 2_500, `ended at the deadline (${Date.now() - started} ms)`);
  });

  it('a token request to a private address is refused before any connection, as an attempt is', async () => {
    let looked = 0;
    const guarded = new Deliverer({
      allowPrivateNetworks: false,
      lookup: (_host, _opts, cb) => {
        looked++;
        (cb as (e: null, a: { address: string; family: number }[]) => void)(null, [
          { address: '169.254.169.254', family: 4 },
        ]);
      },
    });
    try {
      const literal = await guarded.post('http://10.0.0.1/token', {}, '', 1_000);
      assert.equal('error' in literal && literal.error.code, 'destination_not_allowed');
      const named = await guarded.post('http://tokens.example/token', {}, '', 1_000);
      assert.equal('error' in named && named.error.code, 'destination_not_allowed');
      assert.equal(looked, 1, 'the name was resolved, and the metadata address refused');
    } finally {
      await guarded.close();
    }
  });

  it('a fast attempt leaves no timer armed for its deadline', async () => {
    const timers = () => process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;
    const before = timers();
    for (let i = 0; i < 20; i++) {
      const report = await deliverer.attempt(request('/ok', 60_000), Math.floor(Date.now() / 1_000));
      assert.deepEqual(report.result, { kind: 'response', statusCode: 200, retryAfter: undefined });
      assert.equal(report.responseExcerpt, 'ok');
    }
    assert.ok(timers() <= before, `no deadline left armed (${before} timers before, ${timers()} after)`);
  });
});

describe('Deliverer deadline: connecting', () => {
  /** A TCP server that takes connections and never says a word: a TLS handshake that never completes. */
  let server: NetServer;
  let port = 0;
  const sockets: { openedAt: number; closedAt: number }[] = [];
  const deliverer = new Deliverer({ allowPrivateNetworks: true, connections: 8 });

  before(async () => {
    server = createNetServer((socket) => {
      const entry = { openedAt: Date.now(), closedAt: 0 };
      sockets.push(entry);
      socket.on('close', () => {
        entry.closedAt = Date.now();
      });
      socket.on('error', () => undefined);
      // Read (and drop) the ClientHello, so the client's close is seen behind it.
      socket.resume();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  after(async () => {
    await deliverer.close();
    await new Promise((resolve) => server.close(resolve));
  });

  it('timeoutMs covers the TLS handshake: several attempts at once to one origin each end, socket closed, within it + 500 ms', async () => {
    const timeoutMs = 1_000;
    const started = Date.now();
    const reports = await Promise.all(
      Array.from({ length: 3 }, (_, i) =>
        deliverer.attempt(
          requestTo(`https://127.0.0.1:${port}/hook/${i}`, timeoutMs),
          Math.floor(started / 1_000),
        ),
      ),
    );
    const took = Date.now() - started;
    for (const report of reports)
      assert.deepEqual(
        report.result.kind === 'error' && report.result.code,
        'timeout',
        JSON.stringify(report),
      );
    assert.ok(took < timeoutMs + 500, `the attempts ended after ${took} ms`);
    for (let i = 0; i < 50 && sockets.some((s) => s.closedAt === 0); i++)
      await new Promise((r) => setTimeout(r, 20));
    assert.ok(sockets.length >= 1, 'the server saw a connection');
    for (const s of sockets)
      assert.ok(
        s.closedAt > 0 && s.closedAt - started < timeoutMs + 500,
        `a socket closed ${s.closedAt === 0 ? 'never' : `${s.closedAt - started} ms`} after the attempts began`,
      );
  });
});
