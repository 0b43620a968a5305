/**
 * Attempts made on a delivery thread: the same request as the main thread's `Deliverer`
 * (signed, its outcome typed), the SSRF guard applied on the thread, a thread that dies
 * failing only the attempts it held, and a close that ends every thread.
 */

import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { Worker } from 'node:worker_threads';
import { signOne } from '@sluice/core';
import type { DeliveryRequest } from './deliver.ts';
import { DeliveryThreads, THREAD_FAILED } from './delivery-threads.ts';

const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';

interface Seen {
  headers: IncomingMessage['headers'];
  body: string;
  /** When the receiver had the whole request (wall clock). */
  at: number;
}

describe('DeliveryThreads', () => {
  let server: Server;
  let port: number;
  const seen: Seen[] = [];
  /** Requests held open until the test lets them go. */
  const held: (() => void)[] = [];

  before(async () => {
    server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        seen.push({ headers: req.headers, body: Buffer.concat(chunks).toString('utf8'), at: Date.now() });
        const answer = () => {
          res.writeHead(req.url === '/busy' ? 429 : 200, { 'retry-after': '7' });
          res.end('thanks');
        };
        if (req.url === '/hold') held.push(answer);
        else answer();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });

  after(async () => {
    for (const answer of held.splice(0)) answer();
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  const request = (path: string, eventId: string): DeliveryRequest => ({
    url: `http://127.0.0.1:${port}${path}`,
    eventId,
    eventType: 'order.paid',
    body: JSON.stringify({ eventId }),
    sequence: 3,
    attempt: 1,
    secrets: [SECRET],
    timeoutMs: 5_000,
  });

  it('makes the signed request on the thread and reports its outcome', async () => {
    const threads = new DeliveryThreads({ allowPrivateNetworks: true, connections: 8, threads: 2 });
    try {
      const now = Math.floor(Date.now() / 1_000);
      const sentAt = Date.now();
      const writtenAt = new Map<string, number>();
      const reports = await Promise.all(
        ['evt_a', 'evt_b', 'evt_c'].map((id) =>
          threads.attempt(request('/ok', id), now, (at) => writtenAt.set(id, at)),
        ),
      );
      const receivedAt = Date.now();
      for (const report of reports)
        assert.deepEqual(report.result, { kind: 'response', statusCode: 200, retryAfter: '7' });
      assert.equal(reports[0]?.responseExcerpt, 'thanks');
      assert.equal(writtenAt.size, 3, 'each request was reported written before its outcome');
      const got = seen.find((s) => s.headers['webhook-id'] === 'evt_b');
      assert.ok(got, 'the receiver saw evt_b');
      // The thread's own times, on the wall clock: written within the attempt, and ended after
      // the receiver had the request (the send window ends the request's occupancy from there).
      // The write is stamped once the write has returned, so a receiver that runs first may
      // see the request before that stamp: the window only takes the write + the arrival
      // bound as the latest arrival, never the write as the earliest.
      const written = writtenAt.get('evt_b') as number;
      const ended = reports[1]?.endedAt as number;
      assert.ok(sentAt <= written && written <= ended, `written ${written - sentAt} ms in, before the end`);
      assert.ok(got.at <= ended && ended <= receivedAt, `ended ${ended - got.at} ms after the arrival`);
      assert.equal(got.headers['webhook-sequence'], '3');
      assert.equal(got.body, JSON.stringify({ eventId: 'evt_b' }));
      const expected = signOne(SECRET, {
        id: 'evt_b',
        timestamp: Number(got.headers['webhook-timestamp']),
        body: got.body,
      });
      assert.equal(got.headers['webhook-signature'], expected, 'signed with the destination secret');
      const busy = await threads.attempt(request('/busy', 'evt_d'), now);
      assert.deepEqual(busy.result, { kind: 'response', statusCode: 429, retryAfter: '7' });
    } finally {
      await threads.close();
    }
  });

  it('refuses a name that resolves to a private address before connecting, on the thread', async () => {
    const threads = new DeliveryThreads({ allowPrivateNetworks: false, connections: 8, threads: 1 });
    try {
      const before = seen.length;
      // localhost resolves to loopback: private, so the guard refuses it at connect.
      const report = await threads.attempt(
        { ...request('/ok', 'evt_ssrf'), url: `http://localhost:${port}/ok` },
        Math.floor(Date.now() / 1_000),
      );
      assert.equal(report.result.kind, 'error');
      assert.equal(report.result.kind === 'error' && report.result.code, 'destination_not_allowed');
      assert.equal(seen.length, before, 'no request reached the receiver');
    } finally {
      await threads.close();
    }
  });

  it('fails the attempts a dead thread held, and a new thread takes the next', async () => {
    const exits: unknown[] = [];
    const threads = new DeliveryThreads({
      allowPrivateNetworks: true,
      connections: 8,
      threads: 1,
      onThreadExit: (err) => exits.push(err),
    });
    // The thread is private; reach it to kill it as a crash would.
    const inner = threads as unknown as { threads: { worker: Worker }[] };
    try {
      const now = Math.floor(Date.now() / 1_000);
      const pending = threads.attempt(request('/hold', 'evt_held'), now);
      while (held.length === 0) await new Promise((r) => setTimeout(r, 5));
      const first = inner.threads[0]?.worker;
      assert.ok(first instanceof Worker);
      await first.terminate();
      const report = await pending;
      assert.equal(report.result.kind === 'error' && report.result.code, THREAD_FAILED);
      assert.equal(exits.length, 1, 'the exit was reported');
      assert.notEqual(inner.threads[0]?.worker, first, 'a new thread replaced it');
      const next = await threads.attempt(request('/ok', 'evt_after'), now);
      assert.equal(next.result.kind === 'response' && next.result.statusCode, 200);
    } finally {
      for (const answer of held.splice(0)) answer();
      await threads.close();
    }
  });

  it('a thread that keeps dying at start is replaced after a delay; attempts wait for it', async () => {
    const threads = new DeliveryThreads({
      allowPrivateNetworks: true,
      connections: 8,
      threads: 1,
      onThreadExit: () => undefined,
    });
    const inner = threads as unknown as { threads: { worker: Worker | null }[] };
    try {
      const now = Math.floor(Date.now() / 1_000);
      for (let death = 1; death <= 2; death++) {
        while (inner.threads[0]?.worker === null) await new Promise((r) => setTimeout(r, 5));
        const worker = inner.threads[0]?.worker;
        assert.ok(worker instanceof Worker, `a worker before death ${death}`);
        await worker.terminate();
        await new Promise((r) => setImmediate(r));
      }
      assert.equal(inner.threads[0]?.worker, null, 'the second quick death waits before the next start');
      const started = Date.now();
      const report = await threads.attempt(request('/ok', 'evt_waited'), now);
      assert.equal(report.result.kind === 'response' && report.result.statusCode, 200);
      assert.ok(Date.now() - started >= 500, 'the attempt waited for the delayed replacement');
    } finally {
      await threads.close();
    }
  });

  it('closes: every thread exits and no attempt is taken after', async () => {
    const threads = new DeliveryThreads({ allowPrivateNetworks: true, connections: 8, threads: 2 });
    const inner = threads as unknown as { threads: { worker: Worker }[] };
    const exited = inner.threads.map((t) => new Promise((resolve) => t.worker.once('exit', resolve)));
    await threads.attempt(request('/ok', 'evt_last'), Math.floor(Date.now() / 1_000));
    await threads.close();
    await Promise.all(exited);
    await assert.rejects(threads.attempt(request('/ok', 'evt_late'), 0), /closed/);
  });
});
